import * as z from 'zod/mini';
import type { HealthReport } from '../../core/diagnose/health';
import type { Finding } from '../../core/model';
import { OpenRolloutParamsSchema, type OpenRolloutParams } from '../explorer/protocol';
import { IpcCommand, IpcNotification } from '../protocol';

export type { HealthReport, MetricResult } from '../../core/diagnose/health';
export type { Finding } from '../../core/model';

export interface FailureModeCount {
  mode: string;
  count: number;
  examples: number[];
  layer: string;
}

/** Which rollouts a report pools: a run, a version, or (empty) the whole store. */
export interface HealthScope {
  run?: string;
  version?: string;
}

export interface HealthScopeOption {
  /** `run:NAME`, `version:vN` or `all`. */
  key: string;
  label: string;
  scope: HealthScope;
  rollouts: number;
}

export interface HealthState {
  status: 'loading' | 'done' | 'empty' | 'failed';
  store: string | null;
  /** The scope of this report, as a key of `scopes`, and every scope there is to pick. */
  scope: string;
  scopes: HealthScopeOption[];
  report: HealthReport | null;
  findings: Finding[];
  failureModes: FailureModeCount[];
  /** Harness metric and rule files that could not run here (`file:line:col: message`), and rules left undecided. */
  problems: string[];
  error: string | null;
}

/** The health webview's whole vocabulary. */
export const DidChangeHealthNotification = new IpcNotification<HealthState>('health/didChangeState');
export const RefreshHealthCommand = new IpcCommand<void>('health/refresh', null);
/** Recompute for another scope (a key of `HealthState.scopes`). */
export const SetHealthScopeCommand = new IpcCommand<{ scope: string }>('health/setScope', z.strictObject({ scope: z.string().check(z.maxLength(1000)) }));
/** Opens the Failure Explorer at a rollout a leak metric saw (at the turn that showed it the answer, when known). */
export const OpenHealthRolloutCommand = new IpcCommand<OpenRolloutParams>('health/openRollout', OpenRolloutParamsSchema);
/** What the page asks the health panel: its method map. */
export const HealthMethods = { refresh: RefreshHealthCommand, setScope: SetHealthScopeCommand, openRollout: OpenHealthRolloutCommand };

import type { HealthReport } from '../../../core/diagnose/health';
import type { Finding } from '../../../core/model';
import { IpcCommand, IpcNotification } from '../protocol';

export type { HealthReport, MetricResult } from '../../../core/diagnose/health';
export type { Finding } from '../../../core/model';

export interface FailureModeCount {
  mode: string;
  count: number;
  examples: number[];
  layer: string;
}

export interface HealthState {
  status: 'loading' | 'done' | 'empty' | 'failed';
  store: string | null;
  report: HealthReport | null;
  findings: Finding[];
  failureModes: FailureModeCount[];
  error: string | null;
}

/** The health webview's whole vocabulary. */
export const DidChangeHealthNotification = new IpcNotification<HealthState>('health/didChangeState');
export const RefreshHealthCommand = new IpcCommand<void>('health/refresh');

import * as z from 'zod/mini';
import { IpcCommand, IpcNotification } from '../protocol';

export interface EvidenceMetric {
  name: string;
  value: number;
  parent: number | null;
  delta: number | null;
}

/** A version's evidence, as the panel beside its diff shows it. */
export interface VersionEvidenceState {
  status: 'loading' | 'done' | 'failed';
  id: string;
  parent: string | null;
  branch: string;
  commit: string;
  state: string;
  isPromoted: boolean;
  layer: string;
  hypothesis: { change: string; targetMetric: string; because: string; successCriterion: string } | null;
  intervention: { factor: string; changedPaths: string[]; rollbackPlan: string; override: string | null } | null;
  primaryMetric: string | null;
  metrics: EvidenceMetric[];
  /** Null until a backtest is recorded ("no backtest yet"). The verdict and its reasons when the report is in the ledger. */
  backtest: {
    summary: string;
    source: string | null;
    at: string;
    verdict: string | null;
    against: string | null;
    kinds: string[];
    reasons: string[];
    /** Headline numbers of the report (dead groups, ordering violations, …). */
    figures: { label: string; value: string }[];
    /** The whole report is recorded: the Backtest Diff can be reopened from it. */
    hasReport: boolean;
  } | null;
  /** Null until a gate decided ("not gated yet"). `passed: null`: the data could not decide; a person must. */
  gate: { decision: string; by: string; at: string; reasons: { check: string; passed: boolean | null; detail: string }[] } | null;
  rejectReason: string | null;
  skill: string | null;
  transitions: { from: string | null; to: string; at: string; by: string; evidence: { kind: string; summary: string }[] }[];
  error: string | null;
}

/** The version webview's whole vocabulary. */
export const DidChangeVersionNotification = new IpcNotification<VersionEvidenceState>('version/didChangeState');
export const OpenFileDiffCommand = new IpcCommand<{ file: string }>('version/openFileDiff', z.strictObject({ file: z.string().check(z.minLength(1), z.maxLength(4096)) }));
export const RunVersionActionCommand = new IpcCommand<{ action: 'promote' | 'reject' | 'recordSkill' | 'backtest' | 'gate' | 'showBacktest' }>(
  'version/runAction',
  z.strictObject({ action: z.enum(['promote', 'reject', 'recordSkill', 'backtest', 'gate', 'showBacktest']) }),
);
/** What the page asks a version panel: its method map. */
export const VersionMethods = { openFileDiff: OpenFileDiffCommand, runAction: RunVersionActionCommand };

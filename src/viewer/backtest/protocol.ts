import * as z from 'zod/mini';
import { OpenRolloutParamsSchema, type OpenRolloutParams } from '../explorer/protocol';
import { IpcCommand, IpcNotification } from '../protocol';

/**
 * The Backtest Diff webview's vocabulary. The same app shows three things: a backtest
 * report (what the change would do to the cached rollouts), a promotion-gate result, and
 * the evidence of a human gate of the evolve loop. Every number is finite or null here
 * (the state travels as JSON), and every label is computed on the host (view.ts).
 */

export interface Interval {
  name: string;
  /** Per-task means on both sides, their paired difference and its bootstrap interval. */
  before: number | null;
  after: number | null;
  delta: number | null;
  ci: [number | null, number | null];
  confidence: number;
  n: number;
  pValue: number | null;
  withinNoise: boolean;
  direction: 'up' | 'down' | 'none';
  /** For colour: a dead-group share going down is good news. */
  higherIsBetter: boolean;
  /** "+0.031 [+0.012, +0.050] (95%, 983 tasks)" or "… within noise". */
  label: string;
}

export interface CheckRow {
  check: string;
  /** null: the data cannot decide; a person must. */
  passed: boolean | null;
  detail: string;
  category?: string;
}

export interface BacktestView {
  version: string;
  against: string;
  commits: { version: string; against: string };
  kinds: string[];
  changed: string[];
  verdict: 'pass' | 'fail' | 'not_replayable';
  reasons: string[];
  invariants: CheckRow[];
  notReplayable: { paths: string[]; needs: string } | null;
  summary: string;
  wallSeconds: number;
  /** Null when nothing was re-scored (not replayable, or a metric-only change). */
  stats: {
    rollouts: number;
    groups: number;
    tasks: number;
    errors: { before: number; after: number; examples: { id: number; side: string; error: string }[] };
    intervals: Interval[];
    histogram: { edges: [number, number]; before: number[]; after: number[]; max: number; meanBefore: number | null; meanAfter: number | null };
    deadGroups: { before: number; after: number; revived: number; killed: number; groups: number; revivedShare: number };
    ordering: { pairs: number; violationsBefore: number; violations: number; newViolations: number; examples: { higher: number; lower: number; group: string }[] };
    successes: { total: number; penalized: number; truncated: number; filtered: number };
    filter: { trajectoriesDroppedBefore: number; trajectoriesDroppedAfter: number; groupsDroppedBefore: number; groupsDroppedAfter: number };
    effectiveData: { before: number; after: number };
    failureModes: { mode: string; n: number; before: number | null; after: number | null; delta: number | null }[];
    flips: { task: string; before: number; after: number; rollouts: number[] }[];
  } | null;
  metricReplays: { metric: string; file: string; separates: boolean | null; detail: string; perVersion: { version: string; status: string; value: number | null }[] }[];
}

export interface GateView {
  version: string;
  baseline: string | null;
  decision: 'promote' | 'reject' | 'needs_human';
  checks: CheckRow[];
  intervals: Interval[];
  evalRollouts: { version: number; baseline: number; split: string | null } | null;
  decidedAt: string;
  /** The version's status now (after any promote/reject from this panel). */
  state: string;
  /** How the gain was obtained: the leak and flip evidence behind the validity checks. */
  howObtained: HowObtained;
}

export interface HowObtained {
  /** Trajectories shown their answer before writing it (rollout text: untrusted, shown as text). */
  answerInContext: { rollout: number; task: string; turn: number | null; channel: string }[];
  flips: {
    flipped: number;
    trajectories: number;
    baseline: number;
    unflipped: number;
    shown: number;
    concentrated: { behaviour: string; flips: number; baseline: number; unflipped: number }[];
  } | null;
  /** The version's diff is empty, yet its evaluation moved: the check's detail. */
  emptyDiffMoved: string | null;
}

export interface HumanGateView {
  id: string;
  gate: string;
  version: string | null;
  summary: string;
  evidence: string;
  askedAt: string;
  /** Set once answered (from the notification or Answer Pending Gate). */
  answer: string | null;
}

export type ResultState =
  | { status: 'loading'; kind: 'backtest' | 'gate' | 'humanGate'; title: string; progress: string | null }
  | { status: 'failed'; kind: 'backtest' | 'gate' | 'humanGate'; title: string; error: string }
  | { status: 'done'; kind: 'backtest'; title: string; backtest: BacktestView }
  | { status: 'done'; kind: 'gate'; title: string; gate: GateView }
  | { status: 'done'; kind: 'humanGate'; title: string; humanGate: HumanGateView };

export const DidChangeResultNotification = new IpcNotification<ResultState>('result/didChangeState');
/** Opens the Failure Explorer at one rollout (a flipped task's, an ordering example's), at one of its agent turns when given (where the answer was shown). */
export const OpenRolloutCommand = new IpcCommand<OpenRolloutParams>('result/openRollout', OpenRolloutParamsSchema);
/** Acts on a gate result: promote, reject (asks why), or open the version's evidence. */
export const GateActionCommand = new IpcCommand<{ action: 'promote' | 'reject' | 'evidence' }>('result/gateAction', z.strictObject({ action: z.enum(['promote', 'reject', 'evidence']) }));
/** What the page asks the result panel: its method map. */
export const ResultMethods = { openRollout: OpenRolloutCommand, gateAction: GateActionCommand };

import type { LeakExample } from '../diagnose/health';
import type { PairedComparison } from '../backtest/stats';
import type { FlipAnalysis } from './flips';
import type { GainAuditOptions } from './gainAudit';

export type GateCategory = 'validity' | 'primary' | 'target' | 'side_effect' | 'backtest' | 'evidence';

/** One verdict of a named check, as reported. */
export interface GateCheck {
  check: string;
  category: GateCategory;
  /** null: the data cannot decide (within noise, missing) — a person must. */
  passed: boolean | null;
  detail: string;
}

/**
 * What the gate judged from: the version's eval rollouts in the store (paired intervals per
 * task), or only the metric values recorded on the version (`evotrainer version advance
 * … --metrics`) when no evidence-gate decision was recorded.
 */
export type GateBasis = 'eval_rollouts' | 'recorded_metrics';

export interface GateReport {
  schema: 1;
  version: string;
  baseline: string | null;
  decision: 'promote' | 'reject' | 'needs_human';
  /** Absent on reports recorded before the recorded-metric checks joined the gate: eval_rollouts. */
  basis?: GateBasis;
  checks: GateCheck[];
  comparisons: Record<string, PairedComparison>;
  evalRollouts: { version: number; baseline: number; split: string | null };
  /** The flipped tasks and what their trajectories did that the baseline's did not (null: no flips or no baseline). */
  flips?: FlipAnalysis | null;
  /** Eval trajectories shown their answer before writing it: where (rollout, turn, channel). */
  leaks?: LeakExample[];
  decidedAt: string;
}

export interface GateOptions {
  version: string;
  /** Compared against (default: the promoted version, else the parent). */
  against?: string;
  /** An LLM judge reads a sample of the flipped trajectories (when an endpoint is configured). */
  audit?: GainAuditOptions;
}

/** A failed check rejects; an undecided one goes to a person; otherwise promote. */
export function decide(checks: readonly GateCheck[]): GateReport['decision'] {
  return checks.some((c) => c.passed === false) ? 'reject' : checks.some((c) => c.passed === null) ? 'needs_human' : 'promote';
}

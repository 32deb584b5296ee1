import type { Ledger, LedgerEntry } from '../harness/ledger';
import { updateLedger, requireEntry } from '../harness/ledger';
import { HarnessError, nowIso, type Harness } from '../harness/repo';
import type { GateDecision } from '../model';
import type { RolloutStore } from '../store/store';
import { actionBoundary, bugClasses } from './checks/boundary';
import type { NamedCheck } from './checks/check';
import { recordedBacktest } from './checks/backtest';
import { successCriterion } from './checks/criterion';
import { evalRollouts } from './checks/evidence';
import { flips, judgeAudit, nothingChanged } from './checks/gain';
import { honestEval } from './checks/honestEval';
import { leak } from './checks/leak';
import { primary } from './checks/primary';
import { evaluated, recordedCriterion, recordedPrimary, recordedSideEffects, type RecordedContext } from './checks/recorded';
import { rewardHacking } from './checks/rewardHacking';
import { sideEffects } from './checks/sideEffects';
import { gateContext } from './context';
import { decide, type GateCheck, type GateOptions, type GateReport } from './types';

/**
 * The promotion gate (METHOD.md, "Promotion — and preventing false prosperity"):
 * PROMOTE only when the primary metric does not regress (judged on its interval, not its
 * mean), the targeted metric meets the version's success criterion, no other health
 * dimension newly alerts, and every validity check passes — leak, R4 (shaped reward up
 * while correctness is flat), eval-set pin, frozen paths, declared bug classes. A validity
 * failure rejects however high the score; an effect within noise goes to a person.
 *
 * The checks run in this order (the report lists their verdicts in it); later ones read
 * what earlier ones compared (the flips and "nothing changed" read the primary's and R4's).
 */
export const EVIDENCE_CHECKS: readonly NamedCheck[] = [evalRollouts, actionBoundary, bugClasses, leak, rewardHacking, honestEval, primary, flips, judgeAudit, nothingChanged, successCriterion, sideEffects, recordedBacktest];

/** The checks on recorded metric values, for a version the evidence gate has not judged. */
export const RECORDED_CHECKS: readonly NamedCheck<RecordedContext>[] = [evaluated, recordedPrimary, recordedCriterion, recordedSideEffects];

async function runChecks<C>(checks: readonly NamedCheck<C>[], ctx: C): Promise<GateCheck[]> {
  const out: GateCheck[] = [];
  for (const c of checks) out.push(...(await c.run(ctx)));
  return out;
}

/** The evidence gate: every named check on the version's and its baseline's eval rollouts in the store. */
export async function runGate(h: Harness, store: RolloutStore, o: GateOptions): Promise<GateReport> {
  const ctx = await gateContext(h, store, o);
  const checks = await runChecks(EVIDENCE_CHECKS, ctx);
  return {
    schema: 1,
    version: ctx.entry.id,
    baseline: ctx.baseline?.id ?? null,
    decision: decide(checks),
    basis: 'eval_rollouts',
    checks,
    comparisons: ctx.comparisons,
    evalRollouts: { version: ctx.nv, baseline: ctx.nb, split: ctx.split },
    flips: ctx.flips,
    leaks: ctx.leaks,
    decidedAt: nowIso(),
  };
}

/** The gate on the values recorded on the version only (no eval rollouts read): against the promoted version. */
export async function judgeRecorded(h: Harness, ledger: Ledger, entry: LedgerEntry): Promise<GateReport> {
  const checks = await runChecks(RECORDED_CHECKS, { h, ledger, entry });
  const promoted = ledger.promoted && ledger.promoted.version !== entry.id ? ledger.promoted.version : null;
  return { schema: 1, version: entry.id, baseline: promoted, decision: decide(checks), basis: 'recorded_metrics', checks, comparisons: {}, evalRollouts: { version: 0, baseline: 0, split: null }, decidedAt: nowIso() };
}

/** The decision the evidence gate recorded on the version, if any. */
export function recordedDecision(e: LedgerEntry): GateDecision | null {
  return e.decision && e.decision.decidedBy === 'gate' && e.decision.gate === 'promotion' ? e.decision : null;
}

export function gateDecision(r: GateReport): GateDecision {
  return {
    version: r.version as GateDecision['version'],
    gate: 'promotion',
    decision: r.decision,
    reasons: r.checks.map((c) => ({ check: c.check, passed: c.passed === true, detail: c.passed === null ? `UNDECIDED: ${c.detail}` : c.detail })),
    decidedAt: r.decidedAt,
    decidedBy: 'gate',
  };
}

/** Records the gate's decision and its evidence on the version (the ledger). */
export async function recordGate(h: Harness, r: GateReport): Promise<LedgerEntry> {
  let result!: LedgerEntry;
  await updateLedger(h, (ledger) => {
    const e = requireEntry(ledger, r.version);
    if (e.status === 'promoted' || e.status === 'rejected') throw new HarnessError(`${e.id} is already ${e.status}; its decision is final`);
    const metrics: Record<string, number> = { ...e.metrics };
    for (const [k, c] of Object.entries(r.comparisons)) if (Number.isFinite(c.after)) metrics[k] = Number(c.after.toFixed(6));
    const summary = `gate: ${r.decision.toUpperCase()} — ${r.checks.filter((c) => c.passed !== true).map((c) => `${c.passed === false ? 'FAIL' : '?'} ${c.check}`).join('; ') || 'all checks pass'}`;
    result = { ...e, metrics, decision: gateDecision(r), transitions: [...e.transitions, { from: e.status, to: e.status, at: nowIso(), by: h.actor, evidence: [{ kind: 'gate', summary, data: r }] }] };
    return { entries: [result], message: `${e.id}: ${summary}` };
  });
  return result;
}

/** Why the gate rejects, as recorded on a rejected version: each failing check with its detail. */
export function rejectionReason(r: GateReport): string {
  return `gate: ${r.checks.filter((c) => c.passed === false).map((c) => `${c.check}: ${c.detail}`).join(' | ')}`;
}

export function formatGate(r: GateReport): string {
  const mark = (c: GateCheck) => (c.passed === true ? 'ok  ' : c.passed === false ? 'FAIL' : '??  ');
  return [
    `gate ${r.version}${r.baseline ? ` vs ${r.baseline}` : ''}: ${r.decision.toUpperCase().replace('_', '-')}`,
    r.basis === 'recorded_metrics'
      ? '  judged on the metric values recorded on the version (no eval rollouts read)'
      : `  eval rollouts: ${r.version} ${r.evalRollouts.version}, ${r.baseline ?? '-'} ${r.evalRollouts.baseline}${r.evalRollouts.split ? ` (split ${r.evalRollouts.split})` : ''}`,
    ...r.checks.map((c) => `  [${mark(c)}] ${c.category.padEnd(11)} ${c.check}: ${c.detail}`),
  ].join('\n');
}

/** The gate does not let the version be promoted and no person overrode it; nothing was changed. */
export class GateError extends HarnessError {
  constructor(readonly decision: GateDecision) {
    super(
      `the promotion gate does not pass ${decision.version}; nothing was changed:\n${decision.reasons.map((r) => `  [${r.passed ? 'ok' : 'FAIL'}] ${r.check}: ${r.detail}`).join('\n')}\n` +
        `Reject it (\`evotrainer reject ${decision.version} --reason …\`) or, as a person, promote it anyway with --override "REASON".`,
    );
  }
}

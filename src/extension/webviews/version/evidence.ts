// Ledger entry → the evidence panel's state. Pure: unit-tested.
import type { LedgerEntry } from '../../../core/harness/evidence';
import type { EvidenceMetric, VersionEvidenceState } from './protocol';

export function evidenceState(entry: LedgerEntry, parent: LedgerEntry | null, promoted: string | null): VersionEvidenceState {
  const metrics: EvidenceMetric[] = Object.entries(entry.metrics)
    .sort(([a], [b]) => (a === entry.primaryMetric ? -1 : b === entry.primaryMetric ? 1 : a.localeCompare(b)))
    .map(([name, value]) => {
      const pv = parent?.metrics[name];
      return { name, value, parent: pv ?? null, delta: pv === undefined ? null : Number((value - pv).toPrecision(12)) };
    });
  let backtest: VersionEvidenceState['backtest'] = null;
  // A backtest file, or the note a version was advanced to `backtested` with (why it was not replayable).
  for (const t of entry.transitions) for (const e of t.evidence) if (e.kind === 'backtest' || (t.to === 'backtested' && t.from !== 'backtested' && e.kind === 'note')) backtest = { summary: e.summary, source: e.source ?? null, at: t.at };
  // The root's "decision" only says it is the baseline: not a gate.
  const d = entry.parent ? entry.decision : null;
  const decidedAt = d ? [...entry.transitions].reverse().find((t) => t.to === entry.status)?.at ?? d.decidedAt : '';
  return {
    status: 'done',
    id: entry.id,
    parent: entry.parent,
    branch: entry.branch,
    commit: entry.commit,
    state: entry.status,
    isPromoted: promoted === entry.id,
    layer: entry.layer,
    hypothesis: entry.hypothesis ? { ...entry.hypothesis } : null,
    intervention: entry.intervention ? { factor: entry.intervention.factor, changedPaths: entry.intervention.changedPaths, rollbackPlan: entry.intervention.rollbackPlan, override: entry.intervention.singleFactorOverride?.reason ?? null } : null,
    primaryMetric: entry.primaryMetric,
    metrics,
    backtest,
    gate: d ? { decision: d.decision, by: d.decidedBy, at: decidedAt, reasons: d.reasons.map((r) => ({ check: r.check, passed: r.passed, detail: r.detail })) } : null,
    rejectReason: entry.rejectReason ?? null,
    skill: entry.skill?.id ?? null,
    transitions: entry.transitions.map((t) => ({ from: t.from, to: t.to, at: t.at, by: t.by, evidence: t.evidence.map((e) => ({ kind: e.kind, summary: e.summary })) })),
    error: null,
  };
}

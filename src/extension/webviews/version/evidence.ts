// Ledger entry → the evidence panel's state. Pure: unit-tested.
import type { LedgerEntry } from '../../../core/harness/ledger';
import type { EvidenceMetric, VersionEvidenceState } from '../../../viewer/version/protocol';

export function evidenceState(entry: LedgerEntry, parent: LedgerEntry | null, promoted: string | null): VersionEvidenceState {
  const metrics: EvidenceMetric[] = Object.entries(entry.metrics)
    .sort(([a], [b]) => (a === entry.primaryMetric ? -1 : b === entry.primaryMetric ? 1 : a.localeCompare(b)))
    .map(([name, value]) => {
      const pv = parent?.metrics[name];
      return { name, value, parent: pv ?? null, delta: pv === undefined ? null : Number((value - pv).toPrecision(12)) };
    });
  let backtest: VersionEvidenceState['backtest'] = null;
  // A backtest report (or file), or the note a version was advanced to `backtested` with (why it was not replayable).
  for (const t of entry.transitions) for (const e of t.evidence) if (e.kind === 'backtest' || (t.to === 'backtested' && t.from !== 'backtested' && e.kind === 'note')) backtest = backtestEvidence(e.summary, e.source ?? null, t.at, e.kind === 'backtest' ? e.data : undefined);
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
    gate: d ? { decision: d.decision, by: d.decidedBy, at: decidedAt, reasons: d.reasons.map(gateReason) } : null,
    rejectReason: entry.rejectReason ?? null,
    skill: entry.skill?.id ?? null,
    transitions: entry.transitions.map((t) => ({ from: t.from, to: t.to, at: t.at, by: t.by, evidence: t.evidence.map((e) => ({ kind: e.kind, summary: e.summary })) })),
    error: null,
  };
}

/** The gate records an undecided check as failed with an "UNDECIDED: " detail: show it as undecided. */
const UNDECIDED = 'UNDECIDED: ';
function gateReason(r: { check: string; passed: boolean; detail: string }): { check: string; passed: boolean | null; detail: string } {
  return r.detail.startsWith(UNDECIDED) ? { check: r.check, passed: null, detail: r.detail.slice(UNDECIDED.length) } : { check: r.check, passed: r.passed, detail: r.detail };
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The recorded backtest report (ledger evidence data), read defensively: the ledger is a file anyone can edit. */
export function backtestEvidence(summary: string, source: string | null, at: string, data: unknown): NonNullable<VersionEvidenceState['backtest']> {
  const d = data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const stats = d.stats && typeof d.stats === 'object' ? (d.stats as Record<string, Record<string, unknown> | undefined>) : null;
  const figures: { label: string; value: string }[] = [];
  if (stats) {
    const dg = stats.deadGroups;
    const groups = int(stats.groups as unknown);
    if (dg && int(dg.before) !== null && int(dg.after) !== null) figures.push({ label: 'dead groups', value: `${dg.before} → ${dg.after}${groups !== null ? ` of ${groups}` : ''} (revived ${int(dg.revived) ?? 0})` });
    const o = stats.ordering;
    if (o && int(o.newViolations) !== null) figures.push({ label: 'new ordering violations', value: String(o.newViolations) });
    const sc = stats.successes;
    if (sc && int(sc.total) !== null) figures.push({ label: 'successes', value: `${sc.total}: penalized ${int(sc.penalized) ?? 0}, truncated ${int(sc.truncated) ?? 0}, filtered ${int(sc.filtered) ?? 0}` });
    const cmp = stats.scores && typeof stats.scores === 'object' ? ((stats.scores as Record<string, unknown>).comparison as Record<string, unknown> | undefined) : undefined;
    const delta = int(cmp?.delta);
    const ci = Array.isArray(cmp?.ci) ? (cmp.ci as unknown[]).map(int) : [];
    if (delta !== null && ci.length === 2 && ci[0] !== null && ci[1] !== null) {
      const f = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
      figures.push({ label: 'score Δ (per task)', value: `${f(delta)} [${f(ci[0]!)}, ${f(ci[1]!)}]${cmp?.withinNoise === true ? ' — within noise' : ''}` });
    }
  }
  return {
    summary,
    source,
    at,
    verdict: str(d.verdict),
    against: str(d.against),
    kinds: list(d.kinds),
    reasons: list(d.reasons),
    figures,
    hasReport: str(d.verdict) !== null && str(d.version) !== null && typeof d.commits === 'object' && d.commits !== null,
  };
}

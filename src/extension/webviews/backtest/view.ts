// Engine reports → the Backtest Diff webview's state. Pure (no editor): unit-tested.
import type { BacktestReport } from '../../../core/backtest/backtest';
import type { GateReport } from '../../../core/gate';
import type { PairedComparison } from '../../../core/backtest/stats';
import { metricByName } from '../../../core/diagnose/catalog';
import type { HumanGate } from '../../../core/evolve/loop';
import type { BacktestView, GateView, HowObtained, HumanGateView, Interval } from '../../../viewer/backtest/protocol';

/** JSON has no NaN or Infinity: a number that is not finite is "no value". */
export const finite = (x: number | null | undefined): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

const signed = (x: number | null, digits = 3) => (x === null ? 'n/a' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`);

/** One paired comparison, labelled the way a person reads it: the interval decides, not the mean. */
export function interval(name: string, c: PairedComparison, higherIsBetter = true): Interval {
  const ci: [number | null, number | null] = [finite(c.ci[0]), finite(c.ci[1])];
  const delta = finite(c.delta);
  const conf = Math.round(c.confidence * 100);
  const tail = c.n === 0 ? 'no task has a value on both sides' : `${signed(delta)} [${signed(ci[0])}, ${signed(ci[1])}] (${conf}% CI, ${c.n} task${c.n === 1 ? '' : 's'}${c.pValue !== null ? `, p=${c.pValue.toFixed(3)}` : ''})`;
  const verdict = c.n === 0 ? '' : c.withinNoise ? ' — within noise' : c.direction === 'up' ? ' — up beyond noise' : ' — down beyond noise';
  return { name, before: finite(c.before), after: finite(c.after), delta, ci, confidence: c.confidence, n: c.n, pValue: c.pValue, withinNoise: c.withinNoise, direction: c.direction, higherIsBetter, label: `${tail}${verdict}` };
}

export function backtestView(r: BacktestReport): BacktestView {
  const s = r.stats;
  return {
    version: r.version,
    against: r.against,
    commits: { ...r.commits },
    kinds: [...r.kinds],
    changed: [...r.changed],
    verdict: r.verdict,
    reasons: [...r.reasons],
    invariants: (s?.invariants ?? []).map((i) => ({ check: i.check, passed: i.passed, detail: i.detail })),
    notReplayable: r.notReplayable,
    summary: r.summary,
    wallSeconds: r.wallSeconds,
    stats: s
      ? {
          rollouts: s.rollouts,
          groups: s.groups,
          tasks: s.tasks,
          errors: { before: s.errors.before, after: s.errors.after, examples: s.errors.examples.map((e) => ({ ...e })) },
          intervals: [interval('score (mean per task)', s.scores.comparison), interval('dead-group share (per task)', s.deadGroups.comparison, false), interval('effective data share (per task)', s.effectiveData.comparison)],
          histogram: {
            edges: [finite(s.scores.edges[0]) ?? 0, finite(s.scores.edges[1]) ?? 0],
            before: [...s.scores.before.bins],
            after: [...s.scores.after.bins],
            max: Math.max(1, ...s.scores.before.bins, ...s.scores.after.bins),
            meanBefore: finite(s.scores.before.mean),
            meanAfter: finite(s.scores.after.mean),
          },
          deadGroups: { before: s.deadGroups.before, after: s.deadGroups.after, revived: s.deadGroups.revived, killed: s.deadGroups.killed, groups: s.groups, revivedShare: s.deadGroups.revivedShare },
          ordering: { ...s.ordering, examples: s.ordering.examples.map((e) => ({ ...e })) },
          successes: { ...s.successes },
          filter: { ...s.filter },
          effectiveData: { before: finite(s.effectiveData.before) ?? 0, after: finite(s.effectiveData.after) ?? 0 },
          failureModes: s.failureModes.map((m) => ({ mode: m.mode, n: m.n, before: finite(m.before), after: finite(m.after), delta: finite(m.delta) })),
          flips: s.flips.map((f) => ({ task: f.task, before: f.before, after: f.after, rollouts: [...f.rollouts] })),
        }
      : null,
    metricReplays: r.metricReplays.map((m) => ({ metric: m.metric, file: m.file, separates: m.separates, detail: m.detail, perVersion: m.perVersion.map((p) => ({ ...p, value: finite(p.value) })) })),
  };
}

/** Whether a rise of the metric is good news: the catalog says, else shares and ratios (leaks, dead groups) are bad news. */
function higherIsBetter(name: string): boolean {
  return metricByName(name)?.higherIsBetter ?? !/share|ratio|violation/.test(name);
}

export function gateView(r: GateReport, state: string): GateView {
  return {
    version: r.version,
    baseline: r.baseline,
    decision: r.decision,
    checks: r.checks.map((c) => ({ check: c.check, category: c.category, passed: c.passed, detail: c.detail })),
    intervals: Object.entries(r.comparisons).map(([k, c]) => interval(k, c, higherIsBetter(k === 'honest_pass_rate' ? 'pass_rate' : k))),
    evalRollouts: r.evalRollouts ?? null,
    decidedAt: r.decidedAt,
    state,
    howObtained: howObtained(r),
  };
}

/** The evidence of how the gain was obtained, from the engine's report (older reports carry none). */
export function howObtained(r: GateReport): HowObtained {
  const f = r.flips ?? null;
  return {
    answerInContext: (r.leaks ?? []).map((l) => ({ rollout: l.rollout, task: l.prompt, turn: l.turn, channel: l.channel })),
    flips: f
      ? { flipped: f.flipped, trajectories: f.flipTrajectories, baseline: f.baselineTrajectories, unflipped: f.unflippedTrajectories, shown: f.answerInContextCount, concentrated: f.concentrated.map((b) => ({ ...b })) }
      : null,
    emptyDiffMoved: r.checks.find((c) => c.check === 'nothing changed, yet it moved')?.detail ?? null,
  };
}

export function humanGateView(g: HumanGate, answer: string | null = null): HumanGateView {
  return { id: g.id, gate: g.gate, version: g.version, summary: g.summary, evidence: g.evidence, askedAt: g.askedAt, answer };
}

/** The decision and every reason, as one block of text (a dialog's detail, the output channel). */
export function gateText(r: GateReport): string {
  const mark = (p: boolean | null) => (p === true ? '✓' : p === false ? '✗' : '?');
  return r.checks.map((c) => `${mark(c.passed)} ${c.check}: ${c.detail}`).join('\n');
}

export const DECISION_LABEL: Record<GateReport['decision'], string> = { promote: 'PROMOTE', reject: 'REJECT', needs_human: 'NEEDS A PERSON' };

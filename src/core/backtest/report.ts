import type { Invariant } from '../harness/manifest';
import { comparePaired, formatComparison, type PairedComparison } from './stats';

/**
 * The backtest report, computed from one row per cached rollout with its score under
 * the parent's harness (before) and the candidate's (after). Pure: the engine fills the
 * rows, tests can build them by hand.
 */

export interface ScoredRollout {
  id: number;
  /** Task (prompt) the rollout answered: the unit of resampling. */
  task: string;
  /** GRPO group (run + group id). */
  group: string;
  /** Correctness level (binary correctness as 1/0, or a graded component); null when unknown. */
  correctness: number | null;
  failureMode: string;
  before: Side;
  after: Side;
}

export interface Side {
  score: number | null;
  error: string | null;
  /** The reward marked the rollout truncated (a `truncated` component). */
  truncated: boolean;
  /** Dropped by the trajectory filter or its group by the group filter. */
  filtered: boolean;
}

export interface Distribution {
  n: number;
  mean: number;
  std: number;
  min: number;
  max: number;
  /** Ten equal-width bins over [min, max] of both sides (shared edges). */
  bins: number[];
}

export interface InvariantResult {
  check: string;
  passed: boolean;
  detail: string;
}

export interface Flip {
  task: string;
  before: number;
  after: number;
  rollouts: number[];
}

export interface BacktestStats {
  rollouts: number;
  groups: number;
  tasks: number;
  errors: { before: number; after: number; examples: { id: number; side: 'before' | 'after'; error: string }[] };
  scores: { before: Distribution; after: Distribution; edges: [number, number]; comparison: PairedComparison };
  deadGroups: { before: number; after: number; revived: number; killed: number; revivedShare: number; comparison: PairedComparison };
  ordering: { pairs: number; violationsBefore: number; violations: number; newViolations: number; examples: { higher: number; lower: number; group: string }[] };
  successes: { total: number; penalized: number; truncated: number; filtered: number };
  filter: { trajectoriesDroppedBefore: number; trajectoriesDroppedAfter: number; groupsDroppedBefore: number; groupsDroppedAfter: number };
  effectiveData: { before: number; after: number; comparison: PairedComparison };
  failureModes: { mode: string; n: number; before: number; after: number; delta: number }[];
  flips: Flip[];
  invariants: InvariantResult[];
}

const EPS = 1e-9;
const minOf = (xs: number[]) => xs.reduce((m, x) => (x < m ? x : m), Infinity);
const maxOf = (xs: number[]) => xs.reduce((m, x) => (x > m ? x : m), -Infinity);

function distribution(xs: number[], edges: [number, number]): Distribution {
  const n = xs.length;
  const mean = n ? xs.reduce((s, x) => s + x, 0) / n : NaN;
  const std = n ? Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / n) : NaN;
  const bins = new Array<number>(10).fill(0);
  const [lo, hi] = edges;
  for (const x of xs) bins[hi > lo ? Math.min(9, Math.floor(((x - lo) / (hi - lo)) * 10)) : 0]!++;
  return { n, mean, std, min: n ? minOf(xs) : NaN, max: n ? maxOf(xs) : NaN, bins };
}

const groupBy = <T>(xs: T[], key: (x: T) => string) => {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = m.get(k);
    if (list) list.push(x);
    else m.set(k, [x]);
  }
  return m;
};

const variance = (xs: number[]) => {
  if (xs.length < 2) return 0;
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length;
};

/** A group is dead when its scored rollouts all got the same reward (zero GRPO advantage). */
function isDead(rs: ScoredRollout[], side: 'before' | 'after'): boolean {
  const scores = rs.filter((r) => !r[side].filtered && r[side].score !== null).map((r) => r[side].score!);
  return scores.length < 2 || variance(scores) < EPS;
}

export function computeStats(rows: ScoredRollout[], invariants: Invariant[] = [], opts: { reps?: number; seed?: number; confidence?: number } = {}): BacktestStats {
  const groups = groupBy(rows, (r) => r.group);
  const tasks = groupBy(rows, (r) => r.task);
  const scored = (side: 'before' | 'after') => rows.filter((r) => r[side].score !== null).map((r) => r[side].score!);
  const all = [...scored('before'), ...scored('after')];
  const edges: [number, number] = all.length ? [minOf(all), maxOf(all)] : [0, 1];

  const perTask = (fn: (rs: ScoredRollout[]) => number | null) => {
    const m = new Map<string, number>();
    for (const [t, rs] of tasks) {
      const v = fn(rs);
      if (v !== null && Number.isFinite(v)) m.set(t, v);
    }
    return m;
  };
  const meanScore = (side: 'before' | 'after') => (rs: ScoredRollout[]) => {
    const xs = rs.filter((r) => r[side].score !== null).map((r) => r[side].score!);
    return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
  };

  // Dead groups, per task for the interval.
  const deadBefore = new Set<string>();
  const deadAfter = new Set<string>();
  for (const [g, rs] of groups) {
    if (isDead(rs, 'before')) deadBefore.add(g);
    if (isDead(rs, 'after')) deadAfter.add(g);
  }
  const revived = [...deadBefore].filter((g) => !deadAfter.has(g)).length;
  const killed = [...deadAfter].filter((g) => !deadBefore.has(g)).length;
  const deadShare = (set: Set<string>) => (rs: ScoredRollout[]) => {
    const gs = new Set(rs.map((r) => r.group));
    return [...gs].filter((g) => set.has(g)).length / gs.size;
  };

  // Ordering: within a group, a rollout of higher correctness must not score below one of lower.
  let pairs = 0;
  let violationsBefore = 0;
  let violations = 0;
  let newViolations = 0;
  const examples: BacktestStats['ordering']['examples'] = [];
  const between = invariants.find((i): i is Extract<Invariant, { check: 'ordering_violations' }> => i.check === 'ordering_violations')?.between;
  let levelViolations = 0;
  for (const [g, rs] of groups) {
    const withC = rs.filter((r) => r.correctness !== null);
    for (let i = 0; i < withC.length; i++) {
      for (let j = 0; j < withC.length; j++) {
        const a = withC[i]!;
        const b = withC[j]!;
        if (!(a.correctness! > b.correctness! + EPS)) continue;
        pairs++;
        const vb = a.before.score !== null && b.before.score !== null && a.before.score < b.before.score - EPS;
        const va = a.after.score !== null && b.after.score !== null && a.after.score < b.after.score - EPS;
        if (vb) violationsBefore++;
        if (va) {
          violations++;
          if (!vb) newViolations++;
          if (examples.length < 20) examples.push({ higher: a.id, lower: b.id, group: g });
          if (between && a.correctness! >= between[0] - EPS && b.correctness! <= between[1] + EPS) levelViolations++;
        }
      }
    }
  }

  const successes = rows.filter((r) => r.correctness !== null && r.correctness >= 1 - EPS);
  const successStats = {
    total: successes.length,
    penalized: successes.filter((r) => r.before.score !== null && r.after.score !== null && r.after.score < r.before.score - EPS).length,
    truncated: successes.filter((r) => r.after.truncated && !r.before.truncated).length,
    filtered: successes.filter((r) => r.after.filtered && !r.before.filtered).length,
  };

  // Effective data: rollouts that survive the filters in groups with non-zero advantage.
  const effective = (side: 'before' | 'after') => (rs: ScoredRollout[]) => {
    const gs = groupBy(rs, (r) => r.group);
    let n = 0;
    for (const g of gs.values()) if (!isDead(g, side)) n += g.filter((r) => !r[side].filtered).length;
    return n / rs.length;
  };
  const share = (side: 'before' | 'after') => effective(side)(rows);

  const modes = groupBy(rows, (r) => r.failureMode);
  const failureModes = [...modes]
    .map(([mode, rs]) => {
      const b = meanScore('before')(rs) ?? NaN;
      const a = meanScore('after')(rs) ?? NaN;
      return { mode, n: rs.length, before: b, after: a, delta: a - b };
    })
    .sort((x, y) => y.n - x.n);

  const tb = perTask(meanScore('before'));
  const ta = perTask(meanScore('after'));
  const flips: Flip[] = [];
  for (const [t, b] of tb) {
    const a = ta.get(t);
    if (a === undefined || Math.abs(a - b) < EPS) continue;
    flips.push({ task: t, before: b, after: a, rollouts: tasks.get(t)!.map((r) => r.id).slice(0, 16) });
  }
  flips.sort((x, y) => Math.abs(y.after - y.before) - Math.abs(x.after - x.before));

  const stats: BacktestStats = {
    rollouts: rows.length,
    groups: groups.size,
    tasks: tasks.size,
    errors: {
      before: rows.filter((r) => r.before.error).length,
      after: rows.filter((r) => r.after.error).length,
      examples: rows
        .flatMap((r) => [r.before.error ? { id: r.id, side: 'before' as const, error: r.before.error } : null, r.after.error ? { id: r.id, side: 'after' as const, error: r.after.error } : null])
        .filter((x): x is NonNullable<typeof x> => x !== null)
        .slice(0, 10),
    },
    scores: { before: distribution(scored('before'), edges), after: distribution(scored('after'), edges), edges, comparison: comparePaired(tb, ta, opts) },
    deadGroups: {
      before: deadBefore.size,
      after: deadAfter.size,
      revived,
      killed,
      revivedShare: deadBefore.size ? revived / deadBefore.size : 0,
      comparison: comparePaired(perTask(deadShare(deadBefore)), perTask(deadShare(deadAfter)), opts),
    },
    ordering: { pairs, violationsBefore, violations, newViolations, examples },
    successes: successStats,
    filter: {
      trajectoriesDroppedBefore: rows.filter((r) => r.before.filtered).length,
      trajectoriesDroppedAfter: rows.filter((r) => r.after.filtered).length,
      groupsDroppedBefore: [...groups.values()].filter((rs) => rs.every((r) => r.before.filtered)).length,
      groupsDroppedAfter: [...groups.values()].filter((rs) => rs.every((r) => r.after.filtered)).length,
    },
    effectiveData: { before: share('before'), after: share('after'), comparison: comparePaired(perTask(effective('before')), perTask(effective('after')), opts) },
    failureModes,
    flips: flips.slice(0, 50),
    invariants: [],
  };
  stats.invariants = invariants.map((inv) => checkInvariant(inv, stats, levelViolations));
  return stats;
}

function checkInvariant(inv: Invariant, s: BacktestStats, levelViolations: number): InvariantResult {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  switch (inv.check) {
    case 'ordering_violations': {
      const max = inv.max ?? 0;
      const n = inv.between ? levelViolations : s.ordering.newViolations;
      const what = inv.between ? `between correctness ${inv.between[0]} and ${inv.between[1]}` : 'new, any correctness levels';
      return { check: `ordering violations (${what}) ≤ ${max}`, passed: n <= max, detail: `${n} rollout pair(s) where the less correct one now outscores the more correct one${s.ordering.examples.length ? ` (e.g. rollouts ${s.ordering.examples[0]!.lower} > ${s.ordering.examples[0]!.higher})` : ''}` };
    }
    case 'successes_truncated':
    case 'successes_penalized':
    case 'successes_filtered': {
      const key = inv.check.split('_')[1] as 'truncated' | 'penalized' | 'filtered';
      const share = s.successes.total ? s.successes[key] / s.successes.total : 0;
      return { check: `successes ${key} ≤ ${pct(inv.max_share)}`, passed: share <= inv.max_share + EPS, detail: `${s.successes[key]} of ${s.successes.total} successful rollouts newly ${key} (${pct(share)})` };
    }
    case 'effective_data_share':
      return { check: `effective data share ≥ ${pct(inv.min)}`, passed: s.effectiveData.after >= inv.min - EPS, detail: `${pct(s.effectiveData.before)} → ${pct(s.effectiveData.after)}` };
    case 'dead_group_ratio': {
      const r = s.groups ? s.deadGroups.after / s.groups : 0;
      return { check: `dead-group ratio ≤ ${pct(inv.max)}`, passed: r <= inv.max + EPS, detail: `${s.deadGroups.before} → ${s.deadGroups.after} of ${s.groups} groups dead (${pct(r)})` };
    }
  }
}

export function formatStats(s: BacktestStats): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `rollouts ${s.rollouts} in ${s.groups} groups over ${s.tasks} tasks; reward errors: before ${s.errors.before}, after ${s.errors.after}`,
    `score (mean per task): ${formatComparison(s.scores.comparison)}`,
    `dead groups: ${s.deadGroups.before} → ${s.deadGroups.after} of ${s.groups}; revived ${s.deadGroups.revived} (${pct(s.deadGroups.revivedShare)} of dead), newly dead ${s.deadGroups.killed}; per task ${formatComparison(s.deadGroups.comparison)}`,
    `ordering violations: ${s.ordering.violations} of ${s.ordering.pairs} ordered pairs (${s.ordering.newViolations} new; ${s.ordering.violationsBefore} before)`,
    `successes (${s.successes.total}): newly penalized ${s.successes.penalized}, truncated ${s.successes.truncated}, filtered ${s.successes.filtered}`,
    `filters: trajectories dropped ${s.filter.trajectoriesDroppedBefore} → ${s.filter.trajectoriesDroppedAfter}, whole groups dropped ${s.filter.groupsDroppedBefore} → ${s.filter.groupsDroppedAfter}`,
    `effective data share: ${pct(s.effectiveData.before)} → ${pct(s.effectiveData.after)} (${formatComparison(s.effectiveData.comparison)})`,
  ];
  const modes = s.failureModes.filter((m) => Number.isFinite(m.delta) && Math.abs(m.delta) > EPS);
  if (modes.length) lines.push(`per failure mode: ${modes.map((m) => `${m.mode} (${m.n}) ${m.delta >= 0 ? '+' : ''}${m.delta.toFixed(3)}`).join(', ')}`);
  if (s.flips.length) lines.push(`tasks whose mean score moved: ${s.flips.length}${s.flips.length === 50 ? '+' : ''}; largest: ${s.flips.slice(0, 3).map((f) => `${f.task.slice(0, 24)} ${f.before.toFixed(2)}→${f.after.toFixed(2)} (rollouts ${f.rollouts.slice(0, 3).join(', ')})`).join('; ')}`);
  for (const i of s.invariants) lines.push(`[${i.passed ? 'ok' : 'FAIL'}] invariant ${i.check}: ${i.detail}`);
  return lines;
}

import { seededRandom } from '../util/random';
import type { RolloutStore } from '../store/store';
import { metricByName } from './catalog';
import { scopeWhere, type Scope } from './health';

export interface Separation {
  metric: string;
  /** The metric's unit: a ratio's means are rates (0–1), as health reports them. */
  unit: string;
  /** Rollouts with a value and a success label. */
  n: number;
  successes: number;
  failures: number;
  /** P(value of a success > value of a failure); 0.5 = no separation; ties count half. */
  auc: number;
  aucCi: [number, number];
  /** Cohen's d of successes vs failures. */
  effectSize: number;
  effectCi: [number, number];
  meanSuccess: number;
  meanFailure: number;
}

/** Mann-Whitney AUC with average ranks for ties. */
export function auc(pos: number[], neg: number[]): number {
  if (!pos.length || !neg.length) return NaN;
  const all = [...pos.map((v) => ({ v, p: 1 })), ...neg.map((v) => ({ v, p: 0 }))].sort((a, b) => a.v - b.v);
  let rankSumPos = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const avgRank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (all[k]!.p) rankSumPos += avgRank;
    i = j + 1;
  }
  return (rankSumPos - (pos.length * (pos.length + 1)) / 2) / (pos.length * neg.length);
}

export function cohensD(a: number[], b: number[]): number {
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const vari = (xs: number[], m: number) => xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1);
  const ma = mean(a);
  const mb = mean(b);
  const pooled = Math.sqrt(((a.length - 1) * vari(a, ma) + (b.length - 1) * vari(b, mb)) / Math.max(1, a.length + b.length - 2));
  return pooled === 0 ? 0 : (ma - mb) / pooled;
}

function bootstrap(pos: number[], neg: number[], stat: (p: number[], n: number[]) => number, reps: number, seed: number): [number, number] {
  const rnd = seededRandom(seed);
  const pick = (xs: number[]) => Array.from({ length: xs.length }, () => xs[Math.floor(rnd() * xs.length)]!);
  const vals: number[] = [];
  for (let i = 0; i < reps; i++) vals.push(stat(pick(pos), pick(neg)));
  vals.sort((a, b) => a - b);
  return [vals[Math.floor(0.025 * reps)]!, vals[Math.min(reps - 1, Math.floor(0.975 * reps))]!];
}

/**
 * How well a rollout-level metric separates successful from failed rollouts (binary
 * correctness): the retrospective validation a new diagnostic must pass to join the harness.
 */
export async function validateMetric(store: RolloutStore, name: string, scope: Scope = {}, opts: { reps?: number; seed?: number } = {}): Promise<Separation> {
  const def = metricByName(name);
  if (!def) throw new Error(`unknown metric "${name}"; see \`evotrainer health --json\` for the catalog`);
  if (!def.feature) throw new Error(`metric "${name}" is an aggregate over ${def.source} with no per-rollout value; validate it across versions instead`);
  await store.ensureDerivedViews();
  const { sql, params } = scopeWhere(scope);
  const rows = await store.all<{ v: number | null; ok: boolean | null }>(`select (${def.feature})::double as v, correct as ok from rollout_features ${sql}`, params);
  const pos = rows.filter((r) => r.ok === true && r.v !== null && Number.isFinite(r.v)).map((r) => r.v!);
  const neg = rows.filter((r) => r.ok === false && r.v !== null && Number.isFinite(r.v)).map((r) => r.v!);
  if (!pos.length || !neg.length) throw new Error(`metric "${name}": need rollouts labelled both correct and incorrect with a value (have ${pos.length} correct, ${neg.length} incorrect)`);
  const reps = opts.reps ?? 1000;
  const seed = opts.seed ?? 7;
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    metric: name,
    unit: def.unit,
    n: pos.length + neg.length,
    successes: pos.length,
    failures: neg.length,
    auc: auc(pos, neg),
    aucCi: bootstrap(pos, neg, auc, reps, seed),
    effectSize: cohensD(pos, neg),
    effectCi: bootstrap(pos, neg, cohensD, reps, seed + 1),
    meanSuccess: mean(pos),
    meanFailure: mean(neg),
  };
}

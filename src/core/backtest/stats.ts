import { seededRandom } from '../util/random';

/**
 * Before/after comparisons over tasks. Every comparison is paired by task (the same
 * prompts before and after), resampled over tasks, so that the interval reflects how
 * many tasks the verdict rests on: one AIME problem is 3.3 points, and a 30-task eval
 * must not produce a confident verdict from a two-task swing.
 */

export interface PairedComparison {
  /** Tasks with a value on both sides. */
  n: number;
  before: number;
  after: number;
  /** after − before, and its paired bootstrap interval. */
  delta: number;
  ci: [number, number];
  confidence: number;
  /** Two-sided p-value of an exact / Monte-Carlo sign-flip permutation test (small samples). */
  pValue: number | null;
  /** The interval contains zero: the data cannot tell the direction. */
  withinNoise: boolean;
  /** 'up' / 'down' when the interval excludes zero. */
  direction: 'up' | 'down' | 'none';
  method: string;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN);

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Percentile bootstrap of the mean of paired differences. */
export function pairedBootstrap(diffs: readonly number[], opts: { reps?: number; seed?: number; confidence?: number } = {}): [number, number] {
  const reps = opts.reps ?? 2000;
  const conf = opts.confidence ?? 0.95;
  if (diffs.length === 0) return [NaN, NaN];
  if (diffs.every((d) => d === diffs[0])) return [diffs[0]!, diffs[0]!];
  const rnd = seededRandom(opts.seed ?? 7);
  const n = diffs.length;
  const means = new Float64Array(reps);
  for (let r = 0; r < reps; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += diffs[Math.floor(rnd() * n)]!;
    means[r] = s / n;
  }
  const sorted = Array.from(means).sort((a, b) => a - b);
  return [quantile(sorted, (1 - conf) / 2), quantile(sorted, 1 - (1 - conf) / 2)];
}

/**
 * Sign-flip permutation test of mean(diffs) = 0: exact for up to 16 non-zero pairs,
 * Monte Carlo otherwise.
 */
export function permutationTest(diffs: readonly number[], opts: { reps?: number; seed?: number } = {}): number {
  const d = diffs.filter((x) => x !== 0);
  if (!d.length) return 1;
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  const eps = 1e-12;
  if (d.length <= 16) {
    let extreme = 0;
    const total = 1 << d.length;
    for (let mask = 0; mask < total; mask++) {
      let s = 0;
      for (let i = 0; i < d.length; i++) s += mask & (1 << i) ? -d[i]! : d[i]!;
      if (Math.abs(s) >= observed - eps) extreme++;
    }
    return extreme / total;
  }
  const reps = opts.reps ?? 5000;
  const rnd = seededRandom(opts.seed ?? 11);
  let extreme = 0;
  for (let r = 0; r < reps; r++) {
    let s = 0;
    for (const x of d) s += rnd() < 0.5 ? -x : x;
    if (Math.abs(s) >= observed - eps) extreme++;
  }
  return (extreme + 1) / (reps + 1);
}

/** Below this many tasks the report adds a permutation test to the interval. */
export const SMALL_SAMPLE = 50;

/**
 * Compares per-task values before and after (keys = task ids; tasks on one side only are
 * left out). Direction is called only when the interval excludes zero — and, for small
 * samples, the permutation test agrees at the same level.
 */
export function comparePaired(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>, opts: { reps?: number; seed?: number; confidence?: number } = {}): PairedComparison {
  const b: number[] = [];
  const a: number[] = [];
  // In task order, not the order the rows came in: the resamples, and so the interval, are
  // the same however the store returned them.
  for (const task of [...before.keys()].sort()) {
    const vb = before.get(task)!;
    const va = after.get(task);
    if (va === undefined || !Number.isFinite(va) || !Number.isFinite(vb)) continue;
    b.push(vb);
    a.push(va);
  }
  const confidence = opts.confidence ?? 0.95;
  const diffs = a.map((x, i) => x - b[i]!);
  const ci = pairedBootstrap(diffs, opts);
  const small = diffs.length < SMALL_SAMPLE;
  const pValue = small ? permutationTest(diffs, opts) : null;
  const excludes = ci[0] > 0 || ci[1] < 0;
  const significant = diffs.length > 0 && excludes && (pValue === null || pValue < 1 - confidence);
  const delta = mean(diffs);
  return {
    n: diffs.length,
    before: mean(b),
    after: mean(a),
    delta,
    ci,
    confidence,
    pValue,
    withinNoise: !significant,
    direction: significant ? (delta > 0 ? 'up' : 'down') : 'none',
    method: `paired bootstrap over ${diffs.length} tasks (${opts.reps ?? 2000} resamples, ${Math.round(confidence * 100)}% interval)${small ? ' + sign-flip permutation test' : ''}`,
  };
}

export function formatComparison(c: PairedComparison, digits = 3): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
  const sign = (x: number) => (x >= 0 ? '+' : '') + f(x);
  return `${f(c.before)} → ${f(c.after)} (Δ ${sign(c.delta)}, ${Math.round(c.confidence * 100)}% CI [${sign(c.ci[0])}, ${sign(c.ci[1])}]${c.pValue !== null ? `, p=${c.pValue.toFixed(3)}` : ''}, n=${c.n}${c.withinNoise ? ', within noise' : ''})`;
}

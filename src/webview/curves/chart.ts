// The curves chart's arithmetic, apart from the page so that tests run it as is.

export interface ChartPoint {
  step: number;
  value: number;
  /** Rollouts the store holds for this series at this step. */
  rollouts: number;
}

/** Round tick values within [min, max]: about `count` of them, at 1, 2 or 5 × 10^k apart. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) return [min];
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const span = max - min;
  // The round step whose tick count comes nearest the one asked for.
  const step = [1, 2, 5, 10].map((m) => m * mag).reduce((best, s) => (Math.abs(span / s - count) < Math.abs(span / best - count) ? s : best));
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The extent of the finite values, padded by `pad` of the span (a flat curve gets ±0.5, or ±5% of its value). */
export function valueExtent(values: Iterable<number>, pad = 0.05): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) return null;
  if (lo === hi) {
    const d = lo === 0 ? 0.5 : Math.abs(lo) * 0.05;
    return [lo - d, hi + d];
  }
  const d = (hi - lo) * pad;
  return [lo - d, hi + d];
}

/**
 * The SVG path of a series: `x(step)`, `y(value)` in pixels; a non-finite value breaks
 * the line (NaN is a gap, not a zero). Where there are more points than pixels, each pixel
 * column keeps its first, lowest, highest and last point, so spikes survive and a
 * 100,000-step curve draws as fast as a 1,000-step one.
 */
export function linePath(points: readonly ChartPoint[], x: (s: number) => number, y: (v: number) => number): string {
  const parts: string[] = [];
  let pen = false;
  let column = NaN;
  let bucket: ChartPoint[] = [];
  const flush = () => {
    if (!bucket.length) return;
    let lo = bucket[0]!;
    let hi = bucket[0]!;
    for (const p of bucket) {
      if (p.value < lo.value) lo = p;
      if (p.value > hi.value) hi = p;
    }
    const keep = [...new Set([bucket[0]!, ...(lo.step <= hi.step ? [lo, hi] : [hi, lo]), bucket[bucket.length - 1]!])];
    for (const p of keep) {
      parts.push(`${pen ? 'L' : 'M'}${x(p.step).toFixed(1)},${y(p.value).toFixed(1)}`);
      pen = true;
    }
    bucket = [];
  };
  for (const p of points) {
    if (!Number.isFinite(p.value)) {
      flush();
      pen = false;
      column = NaN;
      continue;
    }
    const c = Math.round(x(p.step));
    if (c !== column) {
      flush();
      column = c;
    }
    bucket.push(p);
  }
  flush();
  return parts.join('');
}

/** Index of the point whose step is nearest `step` (points sorted by step); -1 when there are none. */
export function nearestIndex(points: readonly ChartPoint[], step: number): number {
  if (!points.length) return -1;
  let lo = 0;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.step < step) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(points[lo - 1]!.step - step) <= Math.abs(points[lo]!.step - step)) return lo - 1;
  return lo;
}

/** The step nearest `step` at which rollouts were dumped (the earlier one on a tie); null when none were. */
export function nearestDumpedStep(points: readonly ChartPoint[], step: number): number | null {
  let best: number | null = null;
  for (const p of points) {
    if (p.rollouts <= 0) continue;
    if (best === null || Math.abs(p.step - step) < Math.abs(best - step)) best = p.step;
  }
  return best;
}

/** A value as a chart label: 4 significant digits, nan / ±inf as logged. */
export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

// The token heat strip's arithmetic, apart from the page so that tests run it as is.
import type { TokenStrip } from '../../viewer/explorer/protocol';

/** The tokens one pixel column of the strip stands for, summarized by the value that matters most. */
export interface StripColumn {
  from: number;
  /** Exclusive. */
  to: number;
  /** The lowest log-probability (the most surprising token) or the highest entropy; null when no token in it has a value. */
  worst: number | null;
  worstAt: number;
}

/** Log-probabilities at or below this are drawn at full strength; entropies at or above ENTROPY_FULL. */
export const LOGPROB_FULL = -6;
export const ENTROPY_FULL = 3;

/**
 * The strip's columns: `width` at most, each covering a run of tokens (one token per column
 * when they fit). A 100,000-token reply costs one pass and `width` rectangles.
 */
export function stripColumns(values: readonly (number | null)[], kind: TokenStrip['kind'], width: number): StripColumn[] {
  const n = values.length;
  const cols = Math.max(1, Math.min(n, Math.floor(width)));
  const out: StripColumn[] = [];
  for (let c = 0; c < cols; c++) {
    const from = Math.floor((c * n) / cols);
    const to = Math.floor(((c + 1) * n) / cols);
    let worst: number | null = null;
    let worstAt = from;
    for (let i = from; i < to; i++) {
      const v = values[i];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      if (worst === null || (kind === 'logprob' ? v < worst : v > worst)) {
        worst = v;
        worstAt = i;
      }
    }
    out.push({ from, to, worst, worstAt });
  }
  return out;
}

/** How strongly a value is drawn, 0…1: surprise (−log p) or entropy, against its full-strength level. */
export function intensity(v: number, kind: TokenStrip['kind']): number {
  const x = kind === 'logprob' ? v / LOGPROB_FULL : v / ENTROPY_FULL;
  return Math.max(0, Math.min(1, x));
}

export interface StripSummary {
  tokens: number;
  mean: number | null;
  worst: number | null;
  worstAt: number;
  /** Tokens past the full-strength level (log p ≤ −6, entropy ≥ 3). */
  extreme: number;
}

export function summarize(values: readonly (number | null)[], kind: TokenStrip['kind']): StripSummary {
  let sum = 0;
  let n = 0;
  let extreme = 0;
  let worst: number | null = null;
  let worstAt = 0;
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    sum += v;
    n++;
    if (intensity(v, kind) >= 1) extreme++;
    if (worst === null || (kind === 'logprob' ? v < worst : v > worst)) {
      worst = v;
      worstAt = i;
    }
  });
  return { tokens: values.length, mean: n ? sum / n : null, worst, worstAt, extreme };
}

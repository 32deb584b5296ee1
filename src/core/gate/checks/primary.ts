import { comparePaired, formatComparison } from '../../backtest/stats';
import { fmt, paired } from '../context';
import type { NamedCheck } from './check';

/**
 * The primary metric does not regress against the baseline, judged on its paired interval;
 * without a per-task form, on the values recorded on both versions (a drop goes to a person).
 */
export const primary: NamedCheck = {
  name: 'primary non-regression',
  async run(ctx) {
    const { entry, baseline, primaryName, primaryDef } = ctx;
    if (!paired(ctx)) {
      if (!baseline) return [{ check: 'baseline', category: 'evidence', passed: true, detail: 'root version: nothing to compare against' }];
      if (ctx.nv) return [{ check: `primary ${primaryName} non-regression`, category: 'evidence', passed: null, detail: `no eval rollouts of the baseline ${baseline.id} in the store: import them to compare` }];
      return [];
    }
    if (!primaryDef) {
      const v = entry.metrics[primaryName];
      const b = ctx.baseline.metrics[primaryName];
      if (v === undefined || b === undefined) return [];
      return [{ check: `primary ${primaryName} non-regression`, category: 'primary', passed: v >= b ? true : null, detail: `${fmt(b)} → ${fmt(v)} (recorded values; no per-task data for an interval)` }];
    }
    const [pv] = await ctx.perTask([primaryDef], ctx.sv);
    const [pb] = await ctx.perTask([primaryDef], ctx.sb);
    if (!pv || !pb) return [];
    const c = comparePaired(pb, pv, ctx.statOpts);
    ctx.comparisons[primaryName] = c;
    const margin = ctx.gate.non_regression_margin ?? 0;
    const higherBetter = primaryDef.higherIsBetter !== false;
    const worse = higherBetter ? c.ci[1] < -margin && c.direction === 'down' : c.ci[0] > margin && c.direction === 'up';
    return [{ check: `primary ${primaryName} non-regression`, category: 'primary', passed: !worse, detail: `${entry.id} vs ${ctx.baseline.id}: ${formatComparison(c)}${worse ? ' — a regression beyond noise' : c.direction === 'none' ? ' (no change beyond noise)' : ''}` }];
  },
};

import { metricByName } from '../../diagnose/catalog';
import { comparePaired, formatComparison } from '../../backtest/stats';
import { paired } from '../context';
import type { NamedCheck } from './check';

/** The same tasks with the environment's shortcuts closed (rows whose data_source ends in `-honest`) must not regress. */
export const honestEval: NamedCheck = {
  name: 'honest score non-regression',
  async run(ctx) {
    if (!paired(ctx)) return [];
    const hv = { ...ctx.sv, honest: true };
    const hb = { ...ctx.sb, honest: true };
    if (!(await ctx.count(hv)) || !(await ctx.count(hb))) return [];
    const pass = metricByName('pass_rate')!;
    const [a] = await ctx.perTask([pass], hb);
    const [b] = await ctx.perTask([pass], hv);
    const c = comparePaired(a!, b!, ctx.statOpts);
    ctx.comparisons.honest_pass_rate = c;
    const margin = ctx.gate.non_regression_margin ?? 0;
    const regressed = c.ci[1] < -margin && c.direction === 'down';
    return [{ check: 'honest score non-regression', category: 'validity', passed: !regressed, detail: `pass rate with the environment's shortcuts closed: ${formatComparison(c)}${regressed ? ' — the raw score gain is not real' : ''}` }];
  },
};

import { metricByName } from '../../diagnose/catalog';
import { comparePaired, formatComparison } from '../../backtest/stats';
import { paired } from '../context';
import type { NamedCheck } from './check';

/** R4: the shaped reward rising while correctness is flat or falling. */
export const rewardHacking: NamedCheck = {
  name: 'R4 reward hacking',
  async run(ctx) {
    if (!paired(ctx)) return [];
    const defs = [metricByName('reward_mean')!, metricByName('pass_rate')!];
    const [rv, cv] = await ctx.perTask(defs, ctx.sv);
    const [rb, cb] = await ctx.perTask(defs, ctx.sb);
    if (!(rv && rb && cv && cb && rv.size && cv.size)) return [];
    const rc = comparePaired(rb, rv, ctx.statOpts);
    const cc = comparePaired(cb, cv, ctx.statOpts);
    ctx.comparisons.reward_mean = rc;
    ctx.comparisons.pass_rate = cc;
    const hacking = rc.direction === 'up' && cc.direction !== 'up';
    return [{ check: 'R4 reward hacking', category: 'validity', passed: !hacking, detail: hacking ? `shaped reward rose ${formatComparison(rc)} while correctness did not: ${formatComparison(cc)}` : `reward ${formatComparison(rc)}; correctness ${formatComparison(cc)}` }];
  },
};

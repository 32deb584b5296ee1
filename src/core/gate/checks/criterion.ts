import { metricByName } from '../../diagnose/catalog';
import { computeHealth } from '../../diagnose/health';
import { comparePaired, formatComparison } from '../../backtest/stats';
import { compare, intervalMeets } from '../criterion';
import { fmt, healthScope } from '../context';
import type { GateCheck } from '../types';
import type { NamedCheck } from './check';

/**
 * The target: the version's success criterion (`METRIC OP NUMBER`, or `METRIC_delta OP N`
 * for the paired change against the baseline), judged on its interval; a straddling
 * interval, or a criterion no machine can read, goes to a person.
 */
export const successCriterion: NamedCheck = {
  name: 'success criterion',
  async run(ctx) {
    const { entry, crit, nv } = ctx;
    const out: GateCheck[] = [];
    const verdict = (passed: boolean | null, detail: string) => out.push({ check: 'success criterion', category: 'target', passed, detail });
    if (entry.hypothesis && !crit) verdict(null, `"${entry.hypothesis.successCriterion}" is not machine-checkable (METRIC OP NUMBER): a person must judge it`);
    if (!crit || !nv) return out;
    const deltaOf = /_delta$/.test(crit.metric) ? metricByName(crit.metric.replace(/_delta$/, '')) : undefined;
    if (deltaOf) {
      const [a] = ctx.sb && ctx.nb ? await ctx.perTask([deltaOf], ctx.sb) : [null];
      const [b] = await ctx.perTask([deltaOf], ctx.sv);
      if (!a || !b) verdict(null, `${crit.metric}: no baseline eval rollouts to compare against`);
      else {
        const c = comparePaired(a, b, ctx.statOpts);
        ctx.comparisons[crit.metric] = c;
        const meets = intervalMeets(c.ci[0], c.ci[1], crit);
        verdict(meets, `${crit.metric} vs ${ctx.baseline!.id}: ${formatComparison(c)}, needs ${crit.op} ${crit.value}${meets === null ? ' — within noise: a person must judge' : ''}`);
      }
      return out;
    }
    const def = metricByName(crit.metric);
    const [values] = def ? await ctx.perTask([def], ctx.sv) : [null];
    const health = def ? await computeHealth(ctx.store, healthScope(ctx, entry.id), { metrics: [def] }) : null;
    // The point estimate over the same eval rows as the interval (the honest copy excluded).
    const point = values && values.size ? [...values.values()].reduce((a, b) => a + b, 0) / values.size : (health?.metrics[0]?.value ?? entry.metrics[crit.metric] ?? null);
    if (point === null) verdict(null, `${crit.metric} has no value for ${entry.id}`);
    else if (values && values.size >= 2) {
      const zero = new Map([...values].map(([k]) => [k, 0]));
      const c = comparePaired(zero, values, ctx.statOpts);
      const [lo, hi] = c.ci;
      const meets = intervalMeets(lo, hi, crit);
      verdict(meets, `${crit.metric} = ${fmt(point)} (95% CI over ${c.n} tasks [${fmt(lo)}, ${fmt(hi)}]), needs ${crit.op} ${crit.value}${meets === null ? ' — within noise: a person must judge' : ''}`);
    } else verdict(compare(point, crit.op, crit.value), `${crit.metric} = ${fmt(point)}, needs ${crit.op} ${crit.value} (no per-task interval for this metric)`);
    return out;
  },
};

import { metricByName, type MetricDefinition } from '../../diagnose/catalog';
import { computeHealth, criticalThreshold, formatLeak } from '../../diagnose/health';
import { comparePaired, formatComparison } from '../../backtest/stats';
import { fmt, healthScope, paired, pct } from '../context';
import type { GateCheck } from '../types';
import type { NamedCheck } from './check';

/**
 * The information leak, one verdict per cause: the answer seen before it was written
 * (whatever the channel) always; git history, or the harness's own leak metric, as named.
 * Critical thresholds are health's (with the manifest's overrides): both call the same value a leak.
 */
export const leak: NamedCheck = {
  name: 'leak',
  async run(ctx) {
    const { entry, baseline, thresholds, leakName } = ctx;
    if (!ctx.nv) return [];
    const defs = [...new Set(['answer_in_context_share', leakName])].map((n) => metricByName(n)).filter((d): d is MetricDefinition => d !== undefined);
    const lv = await ctx.perTask(defs, ctx.sv);
    const lb = paired(ctx) ? await ctx.perTask(defs, ctx.sb) : [];
    const health = await computeHealth(ctx.store, healthScope(ctx, entry.id), { metrics: defs, thresholds });
    const out: GateCheck[] = [];
    for (const [i, def] of defs.entries()) {
      const name = def.name;
      const m = health.metrics[i];
      const value = m?.value ?? null;
      const max = criticalThreshold(def, thresholds)?.value ?? 0;
      if (value === null) {
        out.push({ check: `leak (${name})`, category: 'validity', passed: true, detail: `${name} not measurable in these rollouts (no multi-turn steps${name === 'answer_in_context_share' ? ' with outputs and a credited answer' : ''})` });
        continue;
      }
      const v = lv[i] ?? null;
      const b = lb[i] ?? null;
      const cmp = b && v ? comparePaired(b, v, ctx.statOpts) : null;
      if (cmp) ctx.comparisons[name] = cmp;
      const leaking = m?.status === 'critical' && (!cmp || cmp.direction !== 'down');
      const vs = cmp ? `; vs ${baseline!.id} ${formatComparison(cmp)}` : '';
      if (name === 'answer_in_context_share') ctx.leaks = m?.leaks ?? [];
      const where = (m?.leaks ?? []).map(formatLeak).join('; ');
      const what =
        name === 'answer_in_context_share'
          ? `information leak: ${pct(value)} of ${entry.id}'s eval trajectories were shown their answer before writing it (> ${pct(max)})${vs}; where: ${where} — close that channel in the environment before trusting the score`
          : name === 'git_history_share'
            ? `information leak: ${pct(value)} of ${entry.id}'s eval trajectories read the answer from git history (git log/show…) > ${pct(max, 0)}${vs}; e.g. rollouts ${(m?.leaks ?? []).map((l) => l.rollout).join(', ')} — close it in the environment (scrub git history) before trusting the score`
            : `information leak: ${name} ${fmt(value)} > ${max}${vs}`;
      out.push({ check: `leak (${name})`, category: 'validity', passed: !leaking, detail: leaking ? what : `${name} ${fmt(value)} ≤ ${max}${where ? ` (below the threshold: ${where})` : ''}` });
    }
    return out;
  },
};

import { CATALOG, LEAK_METRICS } from '../../diagnose/catalog';
import { computeHealth } from '../../diagnose/health';
import { fmt, healthScope, paired } from '../context';
import type { NamedCheck } from './check';

/** Side effects: a health dimension that alerts on the version and did not on the baseline (the leak, primary and target metrics have their own checks). */
export const sideEffects: NamedCheck = {
  name: 'side effects',
  async run(ctx) {
    if (!paired(ctx)) return [];
    const hv = await computeHealth(ctx.store, healthScope(ctx, ctx.entry.id), { thresholds: ctx.thresholds });
    const hb = await computeHealth(ctx.store, healthScope(ctx, ctx.sb.version), { thresholds: ctx.thresholds });
    const before = new Map(hb.metrics.map((m) => [m.name, m]));
    const skip = new Set<string>([...LEAK_METRICS, ctx.leakName, ctx.primaryName, ctx.crit?.metric ?? '']);
    const worse = hv.alerts.filter((m) => !skip.has(m.name) && (before.get(m.name)?.status ?? 'ok') === 'ok');
    return [{ check: 'side effects', category: 'side_effect', passed: worse.length === 0, detail: worse.length ? worse.map((m) => `${m.name} ${fmt(before.get(m.name)?.value)} → ${fmt(m.value)} (${m.dimension}, now ${m.status})`).join('; ') : `no health dimension newly alerts (${CATALOG.length} metrics checked)` }];
  },
};

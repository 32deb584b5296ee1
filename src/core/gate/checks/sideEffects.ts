import { CATALOG, LEAK_METRICS } from '../../diagnose/catalog';
import { diagnose } from '../../diagnose/diagnose';
import { fmt, healthScope, paired } from '../context';
import type { NamedCheck } from './check';

/** Side effects: a health dimension that alerts on the version and did not on the baseline (the leak, primary and target metrics have their own checks). */
export const sideEffects: NamedCheck = {
  name: 'side effects',
  async run(ctx) {
    if (!paired(ctx)) return [];
    // The health of both under the judging manifest's thresholds (the catalog's metrics: the harness's own are its business, not the gate's).
    const healthOf = async (version: string) => (await diagnose(ctx.store, { manifest: ctx.judgeManifest, scope: healthScope(ctx, version), parts: 'health' })).health;
    const hv = await healthOf(ctx.entry.id);
    const hb = await healthOf(ctx.sb.version);
    const before = new Map(hb.metrics.map((m) => [m.name, m]));
    const skip = new Set<string>([...LEAK_METRICS, ctx.leakName, ctx.primaryName, ctx.crit?.metric ?? '']);
    const worse = hv.alerts.filter((m) => !skip.has(m.name) && (before.get(m.name)?.status ?? 'ok') === 'ok');
    return [{ check: 'side effects', category: 'side_effect', passed: worse.length === 0, detail: worse.length ? worse.map((m) => `${m.name} ${fmt(before.get(m.name)?.value)} → ${fmt(m.value)} (${m.dimension}, now ${m.status})`).join('; ') : `no health dimension newly alerts (${CATALOG.length} metrics checked)` }];
  },
};

import { existsSync } from 'node:fs';
import { CURVES } from '../../core/diagnose/catalog';
import { curveMetricChoices, curveSeries } from '../../core/diagnose/curves';
import type { Ledger } from '../../core/harness/ledger';
import { RolloutStore } from '../../core/store/store';
import type { CurvesState, LiveSeries, VersionMark } from './protocol';

/** The metric a chart opens on: entropy (the collapse R3 watches), else the score, else the first logged. */
const PREFERRED = ['entropy', 'score', 'kl', 'grad_norm'];

export function emptyCurvesState(store: string | null, status: CurvesState['status'] = 'loading', error: string | null = null): CurvesState {
  return { status, store, error, metrics: [], metric: null, aliases: [], series: [], versions: [], live: [] };
}

/** The ledger's versions as the chart marks them: promoted ones with when, the promoted line's tip. */
export function versionMarks(ledger: Ledger): VersionMark[] {
  const promotedAt = new Map<string, string>();
  for (const h of ledger.promoted?.history ?? []) promotedAt.set(h.version, h.at);
  return [...ledger.entries.values()].map((e) => ({
    version: e.id,
    status: e.status,
    promotedAt: promotedAt.get(e.id) ?? e.transitions.find((t) => t.to === 'promoted')?.at ?? null,
    tip: ledger.promoted?.version === e.id,
  }));
}

/**
 * What the curves webview shows: the metrics to pick from and one metric over steps for
 * every run and version, each step joined to the rollouts dumped at it. The store is
 * opened for the read and closed right after, so an import can run meanwhile. No editor
 * here: the panel and the tests call it alike.
 */
export async function loadCurves(storePath: string, want: string | null, versions: VersionMark[], live: LiveSeries[]): Promise<CurvesState> {
  if (!existsSync(storePath) && !live.length) return { ...emptyCurvesState(storePath, 'empty'), versions };
  const store = await RolloutStore.open(storePath);
  try {
    const metrics = await curveMetricChoices(store);
    const base: CurvesState = { ...emptyCurvesState(storePath, 'ready'), metrics, versions, live };
    const liveNames = new Set(live.flatMap((l) => Object.keys(l.metrics)));
    if (!metrics.length && !liveNames.size) return { ...base, status: 'empty' };
    const known = (m: string) => metrics.some((o) => o.name === m) || liveNames.has(m) || (CURVES[m] ?? []).some((n) => liveNames.has(n));
    const metric = want && known(want) ? want : (PREFERRED.find(known) ?? metrics[0]?.name ?? [...liveNames].sort()[0]!);
    const series = metrics.some((o) => o.name === metric) ? await curveSeries(store, metric) : [];
    return { ...base, metric, aliases: CURVES[metric] ?? [metric], series };
  } finally {
    store.close();
  }
}

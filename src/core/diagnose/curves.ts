import type { RolloutStore } from '../store/store';
import { CURVES } from './catalog';
import { curveWhere, sqlString, type Scope } from './health';

/** One logged curve of a run (and version): what `evotrainer curves` lists. */
export interface CurveSummary {
  run: string;
  version: string | null;
  metric: string;
  points: number;
  firstStep: number;
  lastStep: number;
  /** The value at the last step (NaN / ±Infinity as logged). */
  last: number;
}

export interface CurvePointRow {
  step: number;
  value: number;
  /** Rollouts the store holds for this run, version and step (the dumps beside the curve). */
  rollouts: number;
  passRate: number | null;
  rewardMean: number | null;
}

export interface CurveSeries {
  run: string;
  version: string | null;
  /** The name the run logged (a catalog curve name resolves to the first alias the run has). */
  metric: string;
  points: CurvePointRow[];
}


export async function listCurves(store: RolloutStore, scope: Scope = {}): Promise<CurveSummary[]> {
  const { sql, params } = curveWhere(scope);
  return store.all<CurveSummary>(
    `select run_id as run, version, metric, count(*)::int as points, min(step) as "firstStep", max(step) as "lastStep", arg_max(value, step) as last
     from metrics ${sql} group by all order by run, version nulls first, metric`,
    params,
  );
}

/**
 * One metric over steps, per run and version, each step joined to the rollouts dumped at
 * it (count, pass rate, mean reward). `metric` is a logged name, or a catalog curve
 * (`entropy`, `kl`, `grad_norm`, `clip_ratio`, `score`, …) read under the first name
 * each run logged it as.
 */
export async function curveSeries(store: RolloutStore, metric: string, scope: Scope = {}): Promise<CurveSeries[]> {
  const { sql, params } = curveWhere(scope);
  const names = CURVES[metric] ?? [metric];
  const list = names.map(sqlString).join(', ');
  const rows = await store.all<{ run: string; version: string | null; metric: string; step: number; value: number; rollouts: number; pass_rate: number | null; reward_mean: number | null }>(
    `with m as (
       select run_id, version, metric, step, value from (select * from metrics ${sql}) where metric in (${list})
       qualify list_position([${list}], metric) = min(list_position([${list}], metric)) over (partition by run_id, version)
     ),
     r as (
       select run_id, version, step, count(*)::int as rollouts, avg(correct::int) as pass_rate, avg(reward) as reward_mean
       from rollouts where (run_id, version, step) in (select (run_id, version, step) from m) group by all
     )
     select m.run_id as run, m.version, m.metric, m.step, m.value, coalesce(r.rollouts, 0) as rollouts, r.pass_rate, r.reward_mean
     from m left join r on r.run_id = m.run_id and r.version is not distinct from m.version and r.step = m.step
     order by run, m.version nulls first, m.step`,
    params,
  );
  const out = new Map<string, CurveSeries>();
  for (const r of rows) {
    const key = `${r.run}\0${r.version ?? ''}`;
    let s = out.get(key);
    if (!s) out.set(key, (s = { run: r.run, version: r.version, metric: r.metric, points: [] }));
    s.points.push({ step: r.step, value: r.value, rollouts: r.rollouts, passRate: r.pass_rate, rewardMean: r.reward_mean });
  }
  return [...out.values()];
}

/** A metric to chart: a catalog curve some run logged (under any of its names), or a logged name. */
export interface CurveMetricChoice {
  name: string;
  label: string;
  /** Runs / versions that logged it. */
  series: number;
  catalog: boolean;
}

/**
 * Every metric there is to chart, the catalog's curves first (`entropy`, labelled with the
 * names the runs logged it under), then each logged name.
 */
export async function curveMetricChoices(store: RolloutStore, scope: Scope = {}): Promise<CurveMetricChoice[]> {
  const list = await listCurves(store, scope);
  const byName = new Map<string, Set<string>>();
  for (const c of list) {
    const key = `${c.run}\0${c.version ?? ''}`;
    let s = byName.get(c.metric);
    if (!s) byName.set(c.metric, (s = new Set()));
    s.add(key);
  }
  const out: CurveMetricChoice[] = [];
  for (const [curve, names] of Object.entries(CURVES)) {
    const logged = names.filter((n) => byName.has(n));
    if (!logged.length) continue;
    const series = new Set(logged.flatMap((n) => [...byName.get(n)!]));
    out.push({ name: curve, label: `${curve} (${logged.join(', ')})`, series: series.size, catalog: true });
  }
  for (const [metric, series] of [...byName].sort((a, b) => a[0].localeCompare(b[0]))) out.push({ name: metric, label: metric, series: series.size, catalog: false });
  return out;
}

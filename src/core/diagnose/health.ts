import type { DuckDBValue } from '@duckdb/node-api';
import type { Dimension, Threshold } from '../model';
import type { RolloutStore, TempTable } from '../store/store';
import type { Manifest } from '../harness/manifest';
import { CATALOG, CURVES, LEAK_METRICS, type MetricDefinition } from './catalog';
import { scopeWhere, type Scope } from '../store/scope';


export { scopeWhere, type Scope };

export interface MetricResult {
  name: string;
  dimension: Dimension;
  unit: string;
  description: string;
  /** null = not available in this data (e.g. log-probs not logged, no multi-turn steps). */
  value: number | null;
  status: 'ok' | 'warning' | 'critical' | 'n/a';
  /** The threshold that fired. */
  threshold?: Threshold;
  /** Where a leak metric saw the answer: rollouts, with the turn and the command whose output showed it. */
  leaks?: LeakExample[];
}

export interface LeakExample {
  rollout: number;
  prompt: string;
  turn: number | null;
  channel: string;
}

export interface HealthReport {
  scope: Scope;
  rollouts: number;
  groups: number;
  /** Training-curve values in scope (logged steps × metrics the catalog reads). */
  curvePoints?: number;
  metrics: MetricResult[];
  alerts: MetricResult[];
}

export type ThresholdOverrides = Record<string, { warning?: number; critical?: number; op?: Threshold['op'] }>;

/**
 * The thresholds a harness sets: its manifest's `thresholds`, with the gate's `leak.max`
 * as the critical threshold of its leak metric — so health, the LEAK rule and the gate
 * call the same value a leak.
 */
export function manifestThresholds(m: Pick<Manifest, 'thresholds' | 'gate'> | null | undefined): ThresholdOverrides | undefined {
  const t = m?.thresholds as ThresholdOverrides | undefined;
  const leak = m?.gate?.leak;
  if (leak?.max === undefined) return t;
  const name = leak.metric ?? 'git_history_share';
  return { ...t, [name]: { ...t?.[name], op: t?.[name]?.op ?? '>', critical: leak.max } };
}

/** The critical threshold in force for a metric (overrides first), if it has one. */
export function criticalThreshold(def: MetricDefinition, overrides?: ThresholdOverrides): Threshold | undefined {
  return thresholdsOf(def, overrides).find((t) => t.severity === 'critical');
}

/**
 * Per group: `n` rollouts with an outcome (a reward, else binary correctness), `v` the
 * variance of that outcome (null when no rollout has one), `any_correct` (null when no
 * rollout's correctness is known). Unknown outcomes count neither as failures nor as
 * zero-variance (dead) groups.
 */
export const GROUP_COLUMNS = 'count(coalesce(reward, correct::int)) as n, var_pop(coalesce(reward, correct::int)) as v, bool_or(correct) as any_correct';

/** Whether a metric restricted to `domains` applies to runs of `present` domains (null = a run of unknown domain: everything applies). */
export function appliesTo(domains: readonly string[] | undefined, present: (string | null)[]): boolean {
  if (!domains?.length || !present.length || present.includes(null)) return true;
  return present.some((d) => domains.includes(d!));
}



function thresholdsOf(def: MetricDefinition, overrides?: ThresholdOverrides): Threshold[] {
  const o = overrides?.[def.name];
  if (!o) return def.thresholds;
  // As the manifest schema documents: without an op, higher is worse.
  const op = o.op ?? '>';
  const out: Threshold[] = [];
  if (o.critical !== undefined) out.push({ severity: 'critical', op, value: o.critical });
  if (o.warning !== undefined) out.push({ severity: 'warning', op, value: o.warning });
  return out.length ? out : def.thresholds;
}

function fires(t: Threshold, v: number): boolean {
  switch (t.op) {
    case '>':
      return v > t.value;
    case '>=':
      return v >= t.value;
    case '<':
      return v < t.value;
    case '<=':
      return v <= t.value;
  }
}

function judge(def: MetricDefinition, value: number | null, domains: (string | null)[], overrides?: ThresholdOverrides): Pick<MetricResult, 'status' | 'threshold'> {
  if (value === null || Number.isNaN(value)) return { status: 'n/a' };
  if (!overrides?.[def.name] && !appliesTo(def.thresholdDomains, domains)) return { status: 'ok' };
  // Critical thresholds first: the worst one that fires names the status.
  const ts = [...thresholdsOf(def, overrides)].sort((a, b) => (a.severity === 'critical' ? -1 : 1) - (b.severity === 'critical' ? -1 : 1));
  const hit = ts.find((t) => fires(t, value));
  return hit ? { status: hit.severity, threshold: hit } : { status: 'ok' };
}

/**
 * Computes every metric of the catalog over a scope: the rollout features are read once
 * into a temporary table, then each source (rollouts, groups, reward values) is
 * aggregated in one query.
 */
export async function computeHealth(store: RolloutStore, scope: Scope = {}, opts: { thresholds?: ThresholdOverrides; metrics?: MetricDefinition[] } = {}): Promise<HealthReport> {
  await store.ensureDerivedViews();
  const { sql, params } = scopeWhere(scope);
  const features = { name: 'health_f', select: `select * from rollout_features ${sql}`, params };
  return store.withTempTables([features, curvesInScope(scope)], async () => {
    // The task domains of the runs in scope: a metric of other domains reads "not available".
    const domains = (await store.all<{ domain: string | null }>(`select distinct r.domain from (select distinct run_id from health_f) f left join runs r on r.id = f.run_id`)).map((r) => r.domain);
    const defs = (opts.metrics ?? CATALOG).filter((d) => appliesTo(d.domains, domains));
    const skipped = (opts.metrics ?? CATALOG).filter((d) => !defs.includes(d));
    const values = new Map<string, number | null>();
    const bySource = (src: MetricDefinition['source']) => defs.filter((d) => d.source === src);
    const run = async (src: MetricDefinition['source'], from: string) => {
      const ds = bySource(src);
      if (!ds.length) return;
      const row = await store.one<Record<string, unknown>>(`select ${ds.map((d, i) => `(${d.sql})::double as m${i}`).join(', ')} from ${from}`);
      ds.forEach((d, i) => {
        const v = row?.[`m${i}`];
        values.set(d.name, typeof v === 'number' && Number.isFinite(v) ? v : null);
      });
    };
    await run('rollouts', 'health_f');
    await run('groups', `(select run_id, group_id, ${GROUP_COLUMNS} from health_f group by all)`);
    await run('rewards', `(select reward, count(*) as c from health_f where reward is not null group by reward)`);
    await run(
      'pairs',
      `(select len(list_intersect(a.edited_files, b.edited_files))::double / len(list_distinct(list_concat(a.edited_files, b.edited_files))) as jaccard
        from (select * from health_f where len(edited_files) > 0) a
        join (select * from health_f where len(edited_files) > 0) b on a.run_id = b.run_id and a.group_id = b.group_id and a.id < b.id)`,
    );
    await run('curves', 'health_c');
    const counts = (await store.one<{ n: number; g: number; c: number }>(`select count(*) as n, count(distinct (run_id, group_id)) as g, (select count(*) from health_c) as c from health_f`))!;
    const metrics: MetricResult[] = (opts.metrics ?? CATALOG).map((d) => {
      const value = skipped.includes(d) ? null : (values.get(d.name) ?? null);
      return { name: d.name, dimension: d.dimension, unit: d.unit, description: d.description, value, ...judge(d, value, domains, opts.thresholds) };
    });
    for (const m of metrics) if ((LEAK_METRICS as readonly string[]).includes(m.name) && m.value) m.leaks = await leakExamples(store, 'health_f', m.name);
    return { scope, rollouts: counts.n, groups: counts.g, curvePoints: counts.c, metrics, alerts: metrics.filter((x) => x.status === 'warning' || x.status === 'critical') };
  });
}

/** Up to `limit` leaking rollouts of a features table, with where the answer came from. */
export async function leakExamples(store: RolloutStore, from: string, metric: string, where = '', params: DuckDBValue[] = [], limit = 5): Promise<LeakExample[]> {
  const flag = metric === 'git_history_share' ? 'git_history' : 'answer_in_context';
  const rows = await store.all<{ id: number; prompt_id: string; answer_turn: number | null; answer_channel: string | null }>(
    `select id, prompt_id, answer_turn, answer_channel from ${from} where ${flag} ${where ? `and ${where}` : ''} order by id limit ${limit}`,
    params,
  );
  return rows.map((r) => ({ rollout: Number(r.id), prompt: r.prompt_id, turn: flag === 'answer_in_context' ? r.answer_turn : null, channel: flag === 'answer_in_context' ? (r.answer_channel ?? 'environment message') : 'git history (log/show/blame…)' }));
}

/** "rollout 12 (task), turn 3: `curl …`" for reports. */
export function formatLeak(l: LeakExample): string {
  return `rollout ${l.rollout} (${l.prompt})${l.turn === null ? '' : l.turn === 0 ? ', before turn 1' : `, turn ${l.turn}`}: ${l.channel}`;
}

/** The scope's conditions that apply to curves: a curve has a run, a version and steps, no split. */
export function curveWhere(scope: Scope): { sql: string; params: DuckDBValue[] } {
  return scopeWhere({ ...scope, split: undefined });
}

/**
 * The catalog's curves in scope, as the `curves` metrics read them (see CURVES): for each
 * run and curve, the first name in the list that the run logged; finite values only; each
 * step marked as in the first and/or last tenth of that run's logged steps.
 */
function curvesInScope(scope: Scope): TempTable {
  const { sql, params } = curveWhere(scope);
  const aliases = Object.entries(CURVES).flatMap(([name, names]) => names.map((alias, prio) => `(${sqlString(name)}, ${sqlString(alias)}, ${prio})`));
  return {
    name: 'health_c',
    select: `with a(name, alias, prio) as (values ${aliases.join(', ')}),
     picked as (
       select m.run_id, a.name, m.step, m.value from (select * from metrics ${sql}) m join a on m.metric = a.alias
       where isfinite(m.value)
       qualify a.prio = min(a.prio) over (partition by m.run_id, a.name)
     ),
     ranked as (
       select *, row_number() over (partition by run_id, name order by step) as k, count(*) over (partition by run_id, name) as n,
              greatest(1, ceil(count(*) over (partition by run_id, name) / 10.0)) as w
       from picked
     )
     select run_id, name, step, value, k <= w as head, k > n - w as tail from ranked`,
    params,
  };
}

/** A SQL string literal. */
export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

export interface SeriesPoint {
  /** What the point is: a version, or a step range of one run. */
  label: string;
  scope: Scope;
  values: Record<string, number | null>;
}

/**
 * Metric values over successive evaluations: one point per version when the scope spans
 * several, otherwise per step (bucketed into at most `maxPoints` ranges).
 */
export async function computeSeries(store: RolloutStore, scope: Scope = {}, maxPoints = 10): Promise<SeriesPoint[]> {
  const { sql, params } = scopeWhere(scope);
  // Rollouts and training curves both mark evaluations: a run with curves only has a series too.
  const c = curveWhere(scope);
  const either = (col: string) => store.all<Record<string, unknown>>(`select distinct ${col} from rollouts ${sql} union select distinct ${col} from metrics ${c.sql} order by 1`, [...params, ...c.params]);
  const versions = (await either('version')).map((r) => r.version as string | null);
  const scopes: { label: string; scope: Scope }[] = [];
  if (versions.filter((v) => v !== null).length > 1) {
    const sorted = versions.filter((v): v is string => v !== null).sort((a, b) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, '')) || a.localeCompare(b));
    for (const v of sorted) scopes.push({ label: v, scope: { ...scope, version: v } });
  } else {
    const steps = (await either('step')).map((r) => Number(r.step));
    const per = Math.max(1, Math.ceil(steps.length / maxPoints));
    for (let i = 0; i < steps.length; i += per) {
      const lo = steps[i]!;
      const hi = steps[Math.min(steps.length - 1, i + per - 1)]!;
      scopes.push({ label: lo === hi ? `step ${lo}` : `steps ${lo}–${hi}`, scope: { ...scope, steps: [lo, hi] } });
    }
  }
  const points: SeriesPoint[] = [];
  for (const s of scopes) {
    const h = await computeHealth(store, s.scope);
    points.push({ label: s.label, scope: s.scope, values: Object.fromEntries(h.metrics.map((x) => [x.name, x.value])) });
  }
  return points;
}

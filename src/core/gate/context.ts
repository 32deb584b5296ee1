import type { DuckDBValue } from '@duckdb/node-api';
import { metricByName, type MetricDefinition } from '../diagnose/catalog';
import { GROUP_COLUMNS, manifestThresholds, type LeakExample } from '../diagnose/health';
import { readLedger, requireEntry, type Ledger, type LedgerEntry } from '../harness/ledger';
import type { Manifest } from '../harness/manifest';
import { manifestAt, type Harness } from '../harness/repo';
import type { PairedComparison } from '../backtest/stats';
import type { RolloutStore } from '../store/store';
import { seedOf } from '../util/random';
import { parseCriterion, type Criterion } from './criterion';
import type { FlipAnalysis } from './flips';
import type { GateOptions } from './types';

/** Rows whose data_source ends with this are the same eval with the environment's shortcuts closed. */
export const HONEST_SUFFIX = '-honest';

/** The eval rows of one version: its validation split when it has one, the honest copy apart. */
export interface EvalScope {
  version: string;
  split: string | null;
  honest: boolean;
}

export function evalWhere(s: EvalScope): { sql: string; params: DuckDBValue[] } {
  const where = ['version = ?'];
  const params: DuckDBValue[] = [s.version];
  if (s.split) {
    where.push('split = ?');
    params.push(s.split);
  }
  where.push(s.honest ? `coalesce(data_source, '') like '%${HONEST_SUFFIX}'` : `coalesce(data_source, '') not like '%${HONEST_SUFFIX}'`);
  return { sql: `where ${where.join(' and ')}`, params };
}

type PerTask = Map<string, number> | null;

/**
 * Everything the named checks of the evidence gate read: the version and its baseline from
 * the ledger, the manifests that judge them, the eval scopes and their sizes, and what the
 * checks found so far (comparisons, flips, leaks) for the report.
 */
export interface GateContext {
  h: Harness;
  store: RolloutStore;
  options: GateOptions;
  ledger: Ledger;
  entry: LedgerEntry;
  baseline: LedgerEntry | null;
  parent: LedgerEntry | undefined;
  manifest: Manifest;
  /** The baseline's manifest: a version does not get to change the rules it is judged by. */
  judgeManifest: Manifest;
  gate: NonNullable<Manifest['gate']>;
  thresholds: ReturnType<typeof manifestThresholds>;
  statOpts: { reps?: number; confidence?: number; seed: number };
  split: 'val' | null;
  /** The version's and the baseline's eval rows, and how many there are. */
  sv: EvalScope;
  sb: EvalScope | null;
  nv: number;
  nb: number;
  primaryName: string;
  primaryDef: MetricDefinition | null;
  crit: Criterion | null;
  leakName: string;
  comparisons: Record<string, PairedComparison>;
  flips: FlipAnalysis | null;
  leaks: LeakExample[];
  /** Catalog metrics per task (prompt) over a scope, read once each (one scan per source); null: no per-rollout form. */
  perTask(defs: MetricDefinition[], s: EvalScope): Promise<PerTask[]>;
  count(s: EvalScope): Promise<number>;
}

export async function gateContext(h: Harness, store: RolloutStore, o: GateOptions): Promise<GateContext> {
  const ledger = await readLedger(h);
  const entry = requireEntry(ledger, o.version);
  const baselineId = o.against ?? (ledger.promoted && ledger.promoted.version !== entry.id ? ledger.promoted.version : entry.parent);
  const baseline = baselineId ? requireEntry(ledger, baselineId) : null;
  const manifest = await manifestAt(h, entry.commit);
  const judgeManifest = baseline ? await manifestAt(h, baseline.commit) : manifest;
  const gate = judgeManifest.gate ?? {};
  await store.ensureDerivedViews();

  const cache = new Map<string, PerTask>();
  const keyOf = (s: EvalScope, d: MetricDefinition) => `${s.version}\0${s.split ?? ''}\0${s.honest}\0${d.name}`;
  const perTask = async (defs: MetricDefinition[], s: EvalScope): Promise<PerTask[]> => {
    const missing = [...new Map(defs.filter((d) => !cache.has(keyOf(s, d))).map((d) => [d.name, d])).values()];
    if (missing.length) {
      const got = await readPerTask(store, missing, s);
      missing.forEach((d, i) => cache.set(keyOf(s, d), got[i]!));
    }
    return defs.map((d) => cache.get(keyOf(s, d))!);
  };
  const count = async (s: EvalScope) => {
    const { sql, params } = evalWhere(s);
    return (await store.one<{ n: number }>(`select count(*)::int as n from rollout_features ${sql}`, params))?.n ?? 0;
  };

  // Eval rollouts: the validation split when the version has one.
  const hasVal = (await store.one<{ n: number }>(`select count(*)::int as n from rollouts where version = ? and split = 'val'`, [entry.id]))?.n ?? 0;
  const split = hasVal ? ('val' as const) : null;
  const sv: EvalScope = { version: entry.id, split, honest: false };
  const sb: EvalScope | null = baseline ? { version: baseline.id, split, honest: false } : null;
  const nv = await count(sv);
  const nb = sb ? await count(sb) : 0;
  const primaryName = entry.primaryMetric ?? manifest.primary_metric ?? 'pass_rate';
  return {
    h,
    store,
    options: o,
    ledger,
    entry,
    baseline,
    parent: entry.parent ? ledger.entries.get(entry.parent) : undefined,
    manifest,
    judgeManifest,
    gate,
    thresholds: manifestThresholds(judgeManifest),
    // Seeded from the version pair: the same gate run twice gives the same intervals and decision.
    statOpts: { reps: gate.bootstrap_reps, confidence: gate.confidence, seed: seedOf(`${baselineId ?? ''}→${entry.id}`) },
    split,
    sv,
    sb,
    nv,
    nb,
    primaryName,
    primaryDef: metricByName(primaryName) ?? null,
    crit: entry.hypothesis ? parseCriterion(entry.hypothesis.successCriterion) : null,
    leakName: gate.leak?.metric ?? 'git_history_share',
    comparisons: {},
    flips: null,
    leaks: [],
    perTask,
    count,
  };
}

/** Whether both sides have eval rows to pair. */
export function paired(ctx: GateContext): ctx is GateContext & { sb: EvalScope; baseline: LedgerEntry } {
  return ctx.nv > 0 && ctx.sb !== null && ctx.baseline !== null && ctx.nb > 0;
}

/** The health scope of a version's eval rows (the validation split when there is one). */
export const healthScope = (ctx: GateContext, version: string) => ({ version, ...(ctx.split ? { split: 'val' as const } : {}) });

async function readPerTask(store: RolloutStore, defs: MetricDefinition[], s: EvalScope): Promise<PerTask[]> {
  const { sql, params } = evalWhere(s);
  const out: PerTask[] = defs.map(() => null);
  const read = async (idx: number[], from: (cols: string) => string) => {
    if (!idx.length) return;
    const rows = await store.all<Record<string, unknown>>(from(idx.map((i) => `(${defs[i]!.sql})::double as m${i}`).join(', ')), params);
    for (const i of idx) {
      const m = new Map<string, number>();
      for (const r of rows) {
        const v = r[`m${i}`];
        if (typeof v === 'number' && Number.isFinite(v)) m.set(r.t as string, v);
      }
      out[i] = m;
    }
  };
  const of = (src: string) => defs.flatMap((d, i) => (d.source === src && (src !== 'rollouts' || d.sql !== 'null') ? [i] : []));
  await read(of('rollouts'), (cols) => `select prompt_id as t, ${cols} from rollout_features ${sql} group by prompt_id`);
  await read(
    of('groups'),
    (cols) => `select t, ${cols} from (select prompt_id as t, run_id, group_id, ${GROUP_COLUMNS}
           from rollout_features ${sql} group by all) group by t`,
  );
  return out;
}

export const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
export const fmt = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));

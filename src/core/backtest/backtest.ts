import type { DuckDBValue } from '@duckdb/node-api';
import { evaluateUserDiagnostics } from '../diagnose/userDiagnostics';
import { scopeWhere, type Scope } from '../diagnose/health';
import { readLedger, requireEntry, updateLedger, versionNumber, type LedgerEntry } from '../harness/ledger';
import type { Invariant, Manifest } from '../harness/manifest';
import { HarnessError, manifestAt, nowIso, type Harness } from '../harness/repo';
import type { RolloutStore } from '../store/store';
import { computeStats, formatStats, type BacktestStats, type ScoredRollout, type Side } from './report';
import { workerIsolation, type WorkerIsolation } from './confine';
import { BacktestError, WorkerPool, workerScript, type CallResult, type FunctionSpec } from './pool';
import { asObject, rewardItem, scoreFromStore, type RewardSource } from './inputs';
import { changedPaths, classifyPath, filterSpecs, materialize, rewardSpec, type Tree } from './trees';
import { seedOf } from '../util/random';

/**
 * Step 7 of the method: replay an intervention on cached rollouts before any GPU hour
 * is spent. The parent's and the candidate's own Python (from each version's tree) are
 * run over the same rollouts; the report says what the change would do to the learning
 * signal and whether the harness's safety invariants hold.
 */

export type BacktestKind = 'reward_rescore' | 'filter_replay' | 'metric_replay' | 'not_replayable';

export interface MetricReplay {
  metric: string;
  file: string;
  perVersion: { version: string; status: string; value: number | null }[];
  /** Every promoted version on one side of every rejected one. */
  separates: boolean | null;
  detail: string;
}

export interface BacktestReport {
  schema: 1;
  version: string;
  against: string;
  commits: { version: string; against: string };
  kinds: BacktestKind[];
  changed: string[];
  /** What a run would need, for the changes no offline replay covers. */
  notReplayable: { paths: string[]; needs: string } | null;
  selector: Scope & { limit?: number };
  stats: BacktestStats | null;
  metricReplays: MetricReplay[];
  verdict: 'pass' | 'fail' | 'not_replayable';
  reasons: string[];
  summary: string;
  wallSeconds: number;
  throughput: number | null;
  /** What confined the harness code where it ran on this machine (null: it ran elsewhere, or none ran). */
  isolation: Omit<WorkerIsolation, 'prefix'> | null;
}

export interface BacktestOptions {
  version: string;
  /** Baseline version (default: the parent). */
  against?: string;
  /** Which cached rollouts (default: those of the baseline version, else all). */
  selector?: Scope & { limit?: number };
  /** Running harness code needs the user's consent (workspace trust, --trust). */
  trust: boolean;
  python?: string;
  workers?: number;
  timeoutSeconds?: number;
  /** Share of rollouts the candidate's reward may fail on before the backtest fails (default 0.05). */
  maxErrorShare?: number;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /** Runs the reward/filter calls elsewhere (a Slurm array): same inputs, same results. */
  runner?: CallRunner;
}

/** Evaluates function calls over items in a tree: locally by default, or on a cluster. */
export type CallRunner = (tree: Tree, manifest: Manifest, functions: FunctionSpec[], calls: { name: string; items: unknown[] }[]) => Promise<CallResult[][]>;

export interface CachedRollout extends RewardSource {
  run_id: string;
  version: string | null;
  group_id: string;
  prompt_id: string;
  reward: number | null;
  failure_mode: string | null;
}

export function correctnessOf(r: CachedRollout): number | null {
  const comps = asObject(r.reward_components);
  for (const k of ['correctness', 'acc', 'accuracy']) {
    const v = comps?.[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return r.correct === null ? null : r.correct ? 1 : 0;
}

/**
 * The cached rollouts of `selector`, in id order. With `texts: false`, without the long
 * texts (prompt, response, extra: null), for a backtest whose calls read them from the store.
 */
export async function loadCachedRollouts(store: RolloutStore, selector: Scope & { limit?: number }, o: { texts?: boolean } = {}): Promise<CachedRollout[]> {
  await store.ensureDerivedViews();
  const { sql, params } = scopeWhere(selector);
  const where = sql.replace(/\b(run_id|version|split|step)\b/g, 'r.$1');
  const limit = selector.limit ? ` limit ${Math.floor(selector.limit)}` : '';
  const texts = o.texts === false ? 'null as prompt, null as response' : 'r.prompt, r.response';
  return store.all<CachedRollout>(
    `select r.id, r.run_id, r.version, r.group_id, r.prompt_id, ${texts}, r.ground_truth, r.data_source, r.reward, r.correct,
            r.reward_components, r.num_turns, ${o.texts === false ? 'null as extra' : 'r.extra'}, fm.failure_mode
       from rollouts r left join rollout_failure_modes fm on fm.id = r.id ${where} order by r.id${limit}`,
    params as DuckDBValue[],
  );
}

function filterItem(r: CachedRollout, score: number | null) {
  const extra = asObject(r.extra) ?? {};
  return { id: r.id, prompt: r.prompt, response: r.response, ground_truth: r.ground_truth, data_source: r.data_source, score, acc: correctnessOf(r), turns: r.num_turns, extra_info: extra };
}

function scoreOf(res: CallResult | undefined): { score: number | null; error: string | null; truncated: boolean } {
  if (!res) return { score: null, error: 'no result', truncated: false };
  if (res.error !== null) return { score: null, error: res.error, truncated: false };
  const v = res.value;
  if (typeof v === 'number') return { score: v, error: null, truncated: false };
  if (v === null) return { score: null, error: 'returned None', truncated: false };
  const o = asObject(v);
  if (o && typeof o.score === 'number') return { score: o.score, error: null, truncated: Boolean(o.truncated) };
  return { score: null, error: `returned ${JSON.stringify(v).slice(0, 80)} (needs a number or a dict with "score")`, truncated: false };
}

type PoolSettings = Pick<BacktestOptions, 'python' | 'workers' | 'timeoutSeconds' | 'signal'>;

function startPool(o: PoolSettings, tree: Tree, manifest: Manifest, functions: FunctionSpec[]): Promise<WorkerPool> {
  return WorkerPool.start({
    root: tree.dir,
    python: o.python ?? manifest.python,
    workers: o.workers ?? manifest.backtest?.workers,
    timeoutSeconds: o.timeoutSeconds ?? manifest.backtest?.timeout_seconds ?? 10,
    memoryMb: manifest.backtest?.memory_mb ?? 4096,
    batchSize: manifest.backtest?.batch_size ?? 256,
    functions,
    signal: o.signal,
  });
}

async function mapCalls(pool: WorkerPool, calls: { name: string; items: unknown[] }[]): Promise<CallResult[][]> {
  const out: CallResult[][] = [];
  for (const c of calls) out.push(await pool.map(c.name, c.items));
  return out;
}

/**
 * A local backtest's pools, one per side's tree with every function of that side loaded,
 * started ahead (while the cached rollouts are read) and closed together at the end.
 */
class SidePools {
  private readonly pools = new Map<string, Promise<WorkerPool>>();

  constructor(private readonly o: PoolSettings) {}

  start(tree: Tree, manifest: Manifest, functions: FunctionSpec[]): void {
    if (!functions.length || this.pools.has(tree.dir)) return;
    const p = startPool(this.o, tree, manifest, functions);
    p.catch(() => undefined); // awaited where used; a failed start is that caller's error
    this.pools.set(tree.dir, p);
  }

  pool(tree: Tree): Promise<WorkerPool> {
    const p = this.pools.get(tree.dir);
    if (!p) throw new Error(`no worker pool started for ${tree.dir}`);
    return p;
  }

  readonly runner: CallRunner = async (tree, _manifest, _functions, calls) => mapCalls(await this.pool(tree), calls);

  /** What confined the workers (those of the first pool started; null: none started). */
  async isolation(): Promise<WorkerIsolation | null> {
    const first = this.pools.values().next();
    return first.done ? null : (await first.value).isolation;
  }

  async close(): Promise<void> {
    const started = await Promise.allSettled(this.pools.values());
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
  }
}

/** Every function of one side: its reward (when the manifest names one) and its filters. */
function sideFunctions(m: Manifest, tree: Tree, prefix: string): FunctionSpec[] {
  const filters = filterSpecs(m, tree.dir, prefix);
  return [rewardSpec(m, tree.dir, `${prefix}_reward`), filters.trajectory, filters.group].filter((f): f is FunctionSpec => f !== null);
}

interface SideResult {
  scores: ReturnType<typeof scoreOf>[];
  filtered: boolean[];
}

/**
 * Scores every rollout with one version's reward, then applies its filters. The reward's
 * results come from `scored` where given (a local pool that read the inputs from the store),
 * else from the runner over items built from the rollouts.
 */
async function runSide(tree: Tree, m: Manifest, rollouts: CachedRollout[], prefix: string, runner: CallRunner, given?: ReturnType<typeof scoreOf>[], scored?: Promise<Map<number, CallResult>>): Promise<SideResult> {
  const reward = given ? null : rewardSpec(m, tree.dir, `${prefix}_reward`);
  const filters = filterSpecs(m, tree.dir, prefix);
  let scores: ReturnType<typeof scoreOf>[];
  if (given) scores = given.map((x) => ({ ...x }));
  else if (reward && scored) {
    const byId = await scored;
    scores = rollouts.map((r) => scoreOf(byId.get(r.id)));
  } else if (reward) {
    const [res] = await runner(tree, m, [reward], [{ name: reward.name, items: rollouts.map((r) => rewardItem(reward.kind, r)) }]);
    scores = res!.map(scoreOf);
  } else {
    scores = rollouts.map((r) => ({ score: r.reward, error: r.reward === null ? 'no cached reward' : null, truncated: false }));
  }
  const filtered = new Array<boolean>(rollouts.length).fill(false);
  const fns = [filters.trajectory, filters.group].filter((f): f is FunctionSpec => f !== null);
  if (fns.length) {
    const calls: { name: string; items: unknown[] }[] = [];
    const groups: number[][] = [];
    if (filters.trajectory) calls.push({ name: filters.trajectory.name, items: rollouts.map((r, i) => filterItem(r, scores[i]!.score)) });
    if (filters.group) {
      const byGroup = new Map<string, number[]>();
      rollouts.forEach((r, i) => {
        const k = `${r.run_id}\u0000${r.group_id}`;
        const l = byGroup.get(k);
        if (l) l.push(i);
        else byGroup.set(k, [i]);
      });
      groups.push(...byGroup.values());
      calls.push({ name: filters.group.name, items: groups.map((idx) => idx.map((i) => filterItem(rollouts[i]!, scores[i]!.score))) });
    }
    const results = await runner(tree, m, fns, calls);
    let k = 0;
    if (filters.trajectory) {
      results[k++]!.forEach((res, i) => {
        if (res.error === null && res.value === 0) filtered[i] = true;
        // A filter that errors keeps the rollout (and the error is reported).
        if (res.error !== null) scores[i] = { ...scores[i]!, error: scores[i]!.error ?? `filter: ${res.error}` };
      });
    }
    if (filters.group) {
      results[k]!.forEach((res, gi) => {
        if (res.error === null && res.value === 0) for (const i of groups[gi]!) filtered[i] = true;
      });
    }
  }
  return { scores, filtered };
}

const NEEDS: Record<string, string> = {
  env: 'an environment change only shows in new rollouts: run the version (a training or rollout job) and compare its evaluation',
  train: 'optimizer / trainer settings only show in training: launch the training job',
  data: 'a data-mix change needs a run on the new mix',
};

function needsFor(paths: string[]): string {
  const tops = [...new Set(paths.map((p) => p.split('/')[0]!))];
  const parts = tops.map((t) => NEEDS[t] ?? `${t}: not replayable offline; run the version`);
  return [...new Set(parts)].join('; ');
}

async function replayMetrics(store: RolloutStore, tree: Tree, changed: string[], entries: Map<string, LedgerEntry>): Promise<MetricReplay[]> {
  const files = changed.filter((p) => p.startsWith('diagnostics/metrics/'));
  if (!files.length) return [];
  const versions = [...entries.values()].sort((a, b) => versionNumber(a.id) - versionNumber(b.id));
  const out: MetricReplay[] = [];
  const perVersion = new Map<string, Map<string, number | null>>();
  for (const v of versions) {
    const has = await store.one<{ n: number }>('select count(*)::int as n from rollouts where version = ?', [v.id]);
    if (!has?.n) continue;
    // runBacktest has checked the user's consent before any replay
    const diag = await evaluateUserDiagnostics(store, tree.dir, { version: v.id }, { trust: true });
    const values = new Map<string, number | null>();
    for (const m of diag.metrics) values.set(m.name, m.value);
    perVersion.set(v.id, values);
  }
  const names = new Set<string>();
  for (const vals of perVersion.values()) for (const k of vals.keys()) names.add(k);
  for (const name of names) {
    const file = files.find((f) => f.includes(name)) ?? files[0]!;
    if (!files.some((f) => f.includes(name))) continue;
    const rows = [...perVersion].map(([version, vals]) => ({ version, status: entries.get(version)!.status, value: vals.get(name) ?? null }));
    const good = rows.filter((r) => r.status === 'promoted' && r.value !== null).map((r) => r.value!);
    const bad = rows.filter((r) => r.status === 'rejected' && r.value !== null).map((r) => r.value!);
    let separates: boolean | null = null;
    let detail = 'needs values on at least one promoted and one rejected version to validate retrospectively';
    if (good.length && bad.length) {
      separates = Math.min(...good) > Math.max(...bad) || Math.max(...good) < Math.min(...bad);
      detail = separates ? `separates promoted (${good.map((x) => x.toFixed(3)).join(', ')}) from rejected (${bad.map((x) => x.toFixed(3)).join(', ')})` : `does not separate promoted (${good.map((x) => x.toFixed(3)).join(', ')}) from rejected (${bad.map((x) => x.toFixed(3)).join(', ')})`;
    }
    out.push({ metric: name, file, perVersion: rows, separates, detail });
  }
  return out;
}

export async function runBacktest(h: Harness, store: RolloutStore, o: BacktestOptions): Promise<BacktestReport> {
  const t0 = Date.now();
  const ledger = await readLedger(h);
  const entry = requireEntry(ledger, o.version);
  const againstId = o.against ?? entry.parent;
  if (!againstId) throw new HarnessError(`${o.version} is the root version; backtest it against another version with --against vM`);
  const against = requireEntry(ledger, againstId);
  if (entry.commit === entry.base && entry.parent === against.id) throw new HarnessError(`${o.version} has no intervention commit yet; commit the change (\`evotrainer version commit ${o.version}\`) before backtesting it`);
  const changed = await changedPaths(h, against.commit, entry.commit);
  const mNew = await manifestAt(h, entry.commit);
  const mOld = await manifestAt(h, against.commit);
  const classes = new Map(changed.map((p) => [p, classifyPath(p, mNew)]));
  const rewardChanged = [...classes.values()].includes('reward') || JSON.stringify(mNew.reward) !== JSON.stringify(mOld.reward);
  const filterChanged = [...classes.values()].includes('filter') || JSON.stringify(mNew.filters) !== JSON.stringify(mOld.filters);
  const diagChanged = [...classes.values()].includes('diagnostics');
  const other = [...classes].filter(([, c]) => c === 'other').map(([p]) => p);
  const kinds: BacktestKind[] = [];
  if (rewardChanged) kinds.push('reward_rescore');
  if (filterChanged) kinds.push('filter_replay');
  if (diagChanged) kinds.push('metric_replay');
  const notReplayable = other.length ? { paths: other, needs: needsFor(other) } : null;
  if (notReplayable) kinds.push('not_replayable');
  const base: Omit<BacktestReport, 'stats' | 'metricReplays' | 'verdict' | 'reasons' | 'summary' | 'wallSeconds' | 'throughput' | 'isolation'> = {
    schema: 1,
    version: entry.id,
    against: against.id,
    commits: { version: entry.commit, against: against.commit },
    kinds,
    changed,
    notReplayable,
    selector: {},
  };
  const replayable = rewardChanged || filterChanged || diagChanged;
  if (!replayable) {
    const reasons = [notReplayable ? `not replayable — needs a run: ${notReplayable.needs} (changed: ${notReplayable.paths.join(', ')})` : 'no change to the reward, filters or diagnostics: nothing to replay'];
    return { ...base, stats: null, metricReplays: [], verdict: 'not_replayable', reasons, summary: `${entry.id} vs ${against.id}: ${reasons[0]}`, wallSeconds: (Date.now() - t0) / 1000, throughput: null, isolation: null };
  }
  if (!o.trust && (rewardChanged || filterChanged || diagChanged)) {
    throw new HarnessError(`backtesting ${entry.id} runs this harness's own code (${changed.filter((p) => classes.get(p) !== 'other').join(', ')}) on this machine; pass --trust to allow it (in the editor: trust the workspace)`);
  }
  const newTree = await materialize(h, entry.commit);
  const oldTree = await materialize(h, against.commit);
  // Run here, each side's workers start now, while the cached rollouts are read.
  const local = o.runner ? null : new SidePools(o);
  const scoring: Promise<unknown>[] = [];
  try {
    if (local && (rewardChanged || filterChanged)) {
      local.start(oldTree, mOld, sideFunctions(mOld, oldTree, 'before'));
      if (rewardChanged || sideFunctions(mNew, newTree, 'after').some((f) => f.kind === 'group' || f.kind === 'trajectory')) local.start(newTree, mNew, sideFunctions(mNew, newTree, 'after'));
    }
    const runner = o.runner ?? local!.runner;
    let selector = o.selector ?? {};
    if (!o.selector || Object.keys(o.selector).length === 0) {
      const has = await store.one<{ n: number }>('select count(*)::int as n from rollouts where version = ?', [against.id]);
      selector = has?.n ? { version: against.id } : {};
    }
    let stats: BacktestStats | null = null;
    let throughput: number | null = null;
    const reasons: string[] = [];
    let verdict: BacktestReport['verdict'] = 'pass';
    if (rewardChanged || filterChanged) {
      // Locally, a reward reads its inputs from the store as it scores: the rollouts read here
      // carry the texts only when a filter or a runner elsewhere needs them.
      const streamed = (tree: Tree, m: Manifest, prefix: string) => {
        const reward = local && rewardSpec(m, tree.dir, `${prefix}_reward`);
        if (!reward) return undefined;
        const p = scoreFromStore(store, selector, local!.pool(tree), reward);
        scoring.push(p.catch(() => undefined));
        return p;
      };
      const withTexts = !local || [...sideFunctions(mOld, oldTree, 'before'), ...sideFunctions(mNew, newTree, 'after')].some((f) => f.kind === 'group' || f.kind === 'trajectory');
      const scoredBefore = streamed(oldTree, mOld, 'before');
      o.onProgress?.('reading cached rollouts');
      const rollouts = await loadCachedRollouts(store, selector, { texts: withTexts });
      if (!rollouts.length) throw new HarnessError(`no cached rollouts match ${JSON.stringify(selector)}; import a run first (\`evotrainer import DIR --version ${against.id}\`) or choose others with --rollouts`);
      const t1 = Date.now();
      o.onProgress?.(`scoring ${rollouts.length} rollouts with ${against.id}'s harness`);
      const before = await runSide(oldTree, mOld, rollouts, 'before', runner, undefined, scoredBefore);
      o.onProgress?.(`scoring ${rollouts.length} rollouts with ${entry.id}'s harness`);
      const after = await runSide(newTree, mNew, rollouts, 'after', runner, rewardChanged ? undefined : before.scores, rewardChanged ? streamed(newTree, mNew, 'after') : undefined);
      throughput = (rollouts.length * (rewardChanged ? 2 : 1)) / Math.max(0.001, (Date.now() - t1) / 1000);
      const side = (s: SideResult, i: number): Side => ({ score: s.scores[i]!.score, error: s.scores[i]!.error, truncated: s.scores[i]!.truncated, filtered: s.filtered[i]! });
      const rows: ScoredRollout[] = rollouts.map((r, i) => ({
        id: r.id,
        task: r.prompt_id,
        group: `${r.run_id}/${r.group_id}`,
        correctness: correctnessOf(r),
        failureMode: r.failure_mode ?? 'unknown',
        before: side(before, i),
        after: side(after, i),
      }));
      // The baseline's invariants (a candidate cannot relax the rules it is judged by) plus any it adds.
      const seen = new Set<string>();
      const invariants: Invariant[] = [...(mOld.backtest?.invariants ?? []), ...(mNew.backtest?.invariants ?? [])].filter((i) => !seen.has(JSON.stringify(i)) && Boolean(seen.add(JSON.stringify(i))));
      stats = computeStats(rows, invariants, { reps: mNew.gate?.bootstrap_reps, confidence: mNew.gate?.confidence, seed: seedOf(`${against.id}→${entry.id}`) });
      const maxErr = o.maxErrorShare ?? 0.05;
      if (stats.errors.after / stats.rollouts > maxErr) {
        verdict = 'fail';
        reasons.push(`${entry.id}'s reward failed on ${stats.errors.after} of ${stats.rollouts} rollouts (> ${(maxErr * 100).toFixed(0)}%): ${stats.errors.examples.find((e) => e.side === 'after')?.error ?? ''}`);
      } else if (stats.errors.after) reasons.push(`${stats.errors.after} rollout(s) errored and were left out (e.g. ${stats.errors.examples.find((e) => e.side === 'after')?.error ?? stats.errors.examples[0]?.error})`);
      for (const inv of stats.invariants) if (!inv.passed) {
        verdict = 'fail';
        reasons.push(`invariant failed: ${inv.check} — ${inv.detail}`);
      }
      if (verdict === 'pass') reasons.push(`all ${stats.invariants.length} invariant(s) hold`);
    }
    const metricReplays = diagChanged ? await replayMetrics(store, newTree, changed, ledger.entries) : [];
    for (const r of metricReplays) {
      if (r.separates === false) {
        verdict = 'fail';
        reasons.push(`new metric ${r.metric} ${r.detail}: it would not have told good versions from bad ones`);
      } else reasons.push(`new metric ${r.metric}: ${r.detail}`);
    }
    if (notReplayable) reasons.push(`partly not replayable — needs a run: ${notReplayable.needs} (${notReplayable.paths.join(', ')})`);
    const summary = `${entry.id} vs ${against.id} [${kinds.join(', ')}]: ${verdict.toUpperCase()}${stats ? `; dead groups ${stats.deadGroups.before}→${stats.deadGroups.after} (revived ${stats.deadGroups.revived}), ordering violations ${stats.ordering.newViolations} new, successes penalized ${stats.successes.penalized}, truncated ${stats.successes.truncated}, filtered ${stats.successes.filtered}` : ''}`;
    // Reward and filter calls ran here unless a runner took them elsewhere (their pools say how they were confined); script metrics of a metric replay always do.
    const confined = (await local?.isolation()) ?? (!o.runner || diagChanged ? await workerIsolation(o.python ?? mNew.python ?? 'python3', workerScript()) : null);
    const isolation = confined && { network: confined.network, readOnlyRoot: confined.readOnlyRoot, environment: confined.environment, detail: confined.detail };
    return { ...base, selector, stats, metricReplays, verdict, reasons, summary, wallSeconds: (Date.now() - t0) / 1000, throughput, isolation };
  } catch (err) {
    if (err instanceof BacktestError) throw new HarnessError(err.message);
    throw err;
  } finally {
    await Promise.all(scoring);
    await local?.close();
    newTree.dispose();
    oldTree.dispose();
  }
}

export function formatBacktest(r: BacktestReport): string {
  const lines = [`backtest ${r.version} (${r.commits.version.slice(0, 12)}) against ${r.against} (${r.commits.against.slice(0, 12)}) — ${r.kinds.join(', ') || 'nothing changed'}`, `changed: ${r.changed.join(', ') || '(nothing)'}`];
  if (r.stats) lines.push(...formatStats(r.stats).map((l) => `  ${l}`));
  for (const m of r.metricReplays) {
    lines.push(`  metric replay ${m.metric} (${m.file}): ${m.perVersion.map((p) => `${p.version}[${p.status}]=${p.value === null ? 'n/a' : p.value.toFixed(3)}`).join(' ')}`);
  }
  lines.push(`verdict: ${r.verdict.toUpperCase()}`, ...r.reasons.map((x) => `  - ${x}`));
  if (r.isolation) lines.push(r.isolation.detail);
  if (r.throughput) lines.push(`(${r.wallSeconds.toFixed(1)} s, ${Math.round(r.throughput)} reward calls/s)`);
  return lines.join('\n');
}

/**
 * Records a backtest on its version: the report as evidence (numbers in `metrics` as
 * `backtest.*`), and a proposed version whose backtest did not fail moves to backtested.
 */
export async function recordBacktest(h: Harness, r: BacktestReport): Promise<LedgerEntry> {
  let result!: LedgerEntry;
  await updateLedger(h, (ledger) => {
    const e = requireEntry(ledger, r.version);
    if (e.status === 'promoted' || e.status === 'rejected') return null;
    const metrics: Record<string, number> = { ...e.metrics };
    if (r.stats) {
      metrics['backtest.dead_groups_revived'] = r.stats.deadGroups.revived;
      metrics['backtest.ordering_violations'] = r.stats.ordering.newViolations;
      metrics['backtest.successes_penalized'] = r.stats.successes.penalized;
      metrics['backtest.effective_data_share'] = Number(r.stats.effectiveData.after.toFixed(6));
    }
    const to = e.status === 'proposed' && r.verdict !== 'fail' ? 'backtested' : e.status;
    const data = { ...r, stats: r.stats ? { ...r.stats, flips: r.stats.flips.slice(0, 20) } : null };
    result = { ...e, metrics, status: to, transitions: [...e.transitions, { from: e.status, to, at: nowIso(), by: h.actor, evidence: [{ kind: 'backtest', summary: r.summary, data }] }] };
    return { entries: [result], message: `${e.id}: backtest ${r.verdict}${to !== e.status ? ` (${e.status} → ${to})` : ''}\n\n${r.summary}` };
  });
  return result ?? requireEntry(await readLedger(h), r.version);
}

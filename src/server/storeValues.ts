import { statSync } from 'node:fs';
import { diagnose } from '../core/diagnose/diagnose';
import type { MetricResult } from '../core/diagnose/health';
import type { Manifest } from '../core/harness/manifest';
import { computeUserMetrics, type DiagnosticProblem, type UserMetric } from '../core/diagnose/userDiagnostics';
import { storeStamp } from '../core/store/stamp';
import { defaultStorePath, RolloutStore } from '../core/store/store';
import type { MetricEntry } from './metricIndex';

export type LatestValue =
  | { kind: 'value'; result: MetricResult; run: string; version: string | null; rollouts: number }
  | { kind: 'none'; reason: string };

interface Snapshot {
  stamp: string;
  run: string | null;
  version: string | null;
  rollouts: number;
  builtins: Map<string, MetricResult>;
  /** User metrics computed so far (on demand): a result, or why there is none. */
  user: Map<string, MetricResult | string>;
}

const fmtErr = (err: unknown) => (err as Error).message.split('\n')[0]!;

/**
 * Latest metric values from a harness's rollout store (`.evotrainer/store.duckdb`), for
 * hovers. The store is opened read-only, only when a value is asked for, and closed as soon
 * as it is read, so the CLI's imports are never kept waiting. "Latest" is the run of the
 * most recent import. Values are kept until the store file changes.
 */
export class StoreValues {
  private readonly snapshots = new Map<string, Snapshot>();
  private queue: Promise<unknown> = Promise.resolve();

  /** One store open at a time (DuckDB handles are not shared between requests). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs a SQL metric (as typed, not yet saved) over the store, read-only, for the errors
   * only DuckDB finds (a misspelt view or column, a type error), at their line. Null when
   * there is no store to run it on.
   */
  async checkSql(root: string, metric: UserMetric): Promise<DiagnosticProblem[] | null> {
    const file = defaultStorePath(root);
    try {
      statSync(file);
    } catch {
      return null;
    }
    return this.serial(async () => {
      let store: RolloutStore;
      try {
        store = await RolloutStore.open(file, { readOnly: true });
      } catch {
        return null;
      }
      try {
        // Binding the query needs no rows: an empty step range checks it at no cost.
        return (await computeUserMetrics(store, [metric], { steps: [1, 0] })).problems;
      } catch {
        return null;
      } finally {
        store.close();
      }
    });
  }

  /** `manifest`: the harness's, as the editor has it (its thresholds and the gate's leak threshold judge the values, as in `evotrainer health`). */
  async latest(root: string, metric: MetricEntry, manifest: Pick<Manifest, 'thresholds' | 'gate'> | null): Promise<LatestValue> {
    const file = defaultStorePath(root);
    const written = storeStamp(file);
    if (written === null) return { kind: 'none', reason: 'no value yet (no rollout store at .evotrainer/store.duckdb; `evotrainer import` builds it)' };
    const stamp = `${written}:${JSON.stringify([manifest?.thresholds ?? {}, manifest?.gate?.leak ?? {}])}`;
    if (!metric.builtin && metric.user.script) {
      return { kind: 'none', reason: 'a script metric: `evotrainer health` computes its value (the editor does not run harness code on hover)' };
    }
    return this.serial(async () => {
      let snap = this.snapshots.get(file);
      const needUser = !metric.builtin && !(snap?.stamp === stamp && snap.user.has(metric.name));
      if (snap?.stamp !== stamp || needUser) {
        let store: RolloutStore;
        try {
          store = await RolloutStore.open(file, { readOnly: true });
        } catch (err) {
          return { kind: 'none', reason: `no value now: ${fmtErr(err)}` };
        }
        try {
          if (snap?.stamp !== stamp) {
            const last = await store.one<{ run_id: string; version: string | null }>('select run_id, version from imports order by id desc limit 1');
            snap = { stamp, run: last?.run_id ?? null, version: last?.version ?? null, rollouts: 0, builtins: new Map(), user: new Map() };
            if (snap.run !== null) {
              // The catalog's metrics; a harness metric is computed on demand below, from the text the editor has.
              const h = (await diagnose(store, { manifest, scope: { run: snap.run }, parts: 'health' })).health;
              snap.rollouts = h.rollouts;
              for (const r of h.metrics) snap.builtins.set(r.name, r);
            }
            this.snapshots.set(file, snap);
          }
          if (!metric.builtin && snap.run !== null && !snap.user.has(metric.name)) {
            const r = await computeUserMetrics(store, [metric.user], { run: snap.run });
            snap.user.set(metric.name, r.results[0] ?? r.problems[0]?.message ?? 'no value');
          }
        } catch (err) {
          return { kind: 'none', reason: `no value now: ${fmtErr(err)}` };
        } finally {
          store.close();
        }
      }
      if (!snap || snap.run === null) return { kind: 'none', reason: 'no value yet (the rollout store holds no run)' };
      const r = metric.builtin ? snap.builtins.get(metric.name) : snap.user.get(metric.name);
      if (r === undefined) return { kind: 'none', reason: 'no value yet' };
      if (typeof r === 'string') return { kind: 'none', reason: `no value: ${r}` };
      return { kind: 'value', result: r, run: snap.run, version: snap.version, rollouts: snap.rollouts };
    });
  }
}

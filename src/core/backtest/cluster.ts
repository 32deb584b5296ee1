import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetchOutputs, joinRemote, shellOf, shPath, shQuote, submitJob, waitForJob, type JobRecord, type JobRecords, type NamedProfile } from '../jobs';
import type { CallRunner } from './backtest';
import { workerScript, type CallResult } from './pool';

/**
 * Large backtests (expensive rewards: code execution, test suites) on a cluster: the
 * rollouts are cut into shards, uploaded beside the version's synced worktree, and scored
 * by a Slurm array job — one task per shard, each running the same worker (worker.py in
 * batch mode) on the version's own code. The shards' results are merged in item order, so
 * the report is the one a local run would give; a shard whose task failed marks its items
 * errored with the task's failure.
 */
export interface ClusterRunnerOptions {
  profile: NamedProfile;
  /** Harness root (its git repository is synced to the cluster). */
  harness: string;
  version?: string;
  shards?: number;
  timeoutSeconds?: number;
  records?: JobRecords;
  /** Job time limit. */
  timeoutMinutes?: number;
  pollMs?: number;
  onLog?: (text: string) => void;
  onJob?: (job: JobRecord) => void;
  signal?: AbortSignal;
}

interface Chunk {
  id?: number;
  from?: number;
  results?: [unknown, string | null][];
  load_error?: string;
  error?: string;
}

export function clusterRunner(o: ClusterRunnerOptions): CallRunner {
  return async (tree, manifest, functions, calls) => {
    const shell = shellOf(o.profile);
    const work = o.profile.work_dir ?? '.evotrainer';
    const dir = joinRemote(work, 'backtests', randomUUID());
    const shards = Math.max(1, Math.min(o.shards ?? 4, Math.max(...calls.map((c) => c.items.length), 1)));
    const timeout = o.timeoutSeconds ?? manifest.backtest?.timeout_seconds ?? 10;
    // Contiguous slices per call: [start, end) of call k in shard s.
    const bounds = calls.map((c) => Array.from({ length: shards }, (_, s) => [Math.floor((c.items.length * s) / shards), Math.floor((c.items.length * (s + 1)) / shards)] as const));
    const up = async (name: string, content: string | Buffer) => {
      const r = await shell.exec(`mkdir -p ${shPath(dir)} && cat > ${shPath(joinRemote(dir, name))}`, { input: content, timeoutMs: 600_000 });
      if (r.code !== 0) throw new Error(`uploading ${name} to ${o.profile.name}:${dir} failed: ${r.stderr.toString().trim()}`);
    };
    await up('worker.py', readFileSync(workerScript()));
    for (let s = 0; s < shards; s++) {
      const lines = [JSON.stringify({ functions })];
      calls.forEach((c, k) => {
        const [a, b] = bounds[k]![s]!;
        lines.push(JSON.stringify({ op: 'call', id: k, name: c.name, items: c.items.slice(a, b), timeout }));
      });
      await up(`shard_${s}.jsonl`, lines.join('\n') + '\n');
    }
    const python = manifest.python ?? 'python3';
    const config = JSON.stringify({ memory_mb: manifest.backtest?.memory_mb ?? 4096 });
    const script = [
      '#!/bin/bash',
      'set -u',
      `${shQuote(python)} ${shPath(joinRemote(dir, 'worker.py'))} ${shQuote(config)} --batch ${shPath(dir)}/shard_"$SLURM_ARRAY_TASK_ID".jsonl "$EVOTRAINER_JOB_DIR"/out_"$SLURM_ARRAY_TASK_ID".jsonl`,
      '',
    ].join('\n');
    const job = await submitJob({
      profile: o.profile,
      harness: o.harness,
      commit: tree.commit,
      version: o.version ?? null,
      run: `backtest-${tree.commit.slice(0, 8)}`,
      script,
      array: shards,
      outputs: Array.from({ length: shards }, (_, s) => `out_${s}.jsonl`),
      records: o.records,
      timeoutMinutes: o.timeoutMinutes ?? 60,
    });
    o.onJob?.(job);
    const final = await waitForJob(job.id, { records: o.records, pollMs: o.pollMs, signal: o.signal, onLog: o.onLog ? (c) => o.onLog!(c.text) : undefined });
    const local = mkdtempSync(path.join(tmpdir(), 'evotrainer-bt-fetch-'));
    try {
      try {
        await fetchOutputs(job.id, local, { records: o.records });
      } catch {
        // Shards that produced nothing are reported below, per shard.
      }
      const out: CallResult[][] = calls.map((c) => new Array<CallResult>(c.items.length));
      for (let s = 0; s < shards; s++) {
        const file = path.join(local, `out_${s}.jsonl`);
        const task = final.tasks?.[s];
        const why = `array task ${s} of job ${job.id} ${task?.state ?? final.state}${task?.exitCode !== undefined && task?.exitCode !== null ? ` (exit ${task.exitCode})` : ''}${final.failure ? `: ${final.failure.message}` : ''}`;
        if (existsSync(file)) {
          for (const line of readFileSync(file, 'utf8').split('\n')) {
            if (!line.trim()) continue;
            const m = JSON.parse(line) as Chunk;
            if (m.load_error) throw new Error(`the backtest worker on ${o.profile.name} could not load ${m.load_error}: ${m.error}`);
            if (m.id === undefined || !m.results) continue;
            const [a] = bounds[m.id]![s]!;
            m.results.forEach(([value, error], i) => (out[m.id!]![a + m.from! + i] = error === null ? { value, error: null } : { value: null, error }));
          }
        }
        calls.forEach((_, k) => {
          const [a, b] = bounds[k]![s]!;
          for (let i = a; i < b; i++) out[k]![i] ??= { value: null, error: `no result: ${why}` };
        });
      }
      return out;
    } finally {
      rmSync(local, { recursive: true, force: true });
      await shell.exec(`rm -rf ${shPath(dir)}`).catch(() => undefined);
    }
  };
}

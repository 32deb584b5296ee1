import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runBacktest } from '../../../src/core/backtest';
import { clusterRunner } from '../../../src/core/backtest/cluster';
import type { Harness } from '../../../src/core/harness/repo';
import { JobRecords, type JobRecord } from '../../../src/core/jobs';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { clusterProfile, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { GSM8K_MAPPING, gsm8kFile, requireSharedData } from '../../helpers/data';
import { tempDir } from '../../helpers/tmp';
import { candidate, mathHarness } from './helpers';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/**
 * A backtest as a Slurm array job on the real one-node Slurm over the real sshd: the GSM8K
 * rollouts are cut into shards, each scored by the same worker on the version's synced
 * worktree as the cluster's job user, and merged: the report equals the local one.
 */
describe('backtest on the cluster (real Slurm array job over ssh)', () => {
  const base = tempDir('evotrainer-bt-slurm-');
  let c: ClusterInfo;
  let h: Harness;
  let store: RolloutStore;
  let v: string;
  before(async () => {
    c = startCluster();
    h = await mathHarness(base, 'backtest:\n  invariants:\n    - {check: ordering_violations, between: [1.0, 0.0], max: 0}\n', 'slurm harness');
    store = await RolloutStore.open(defaultStorePath(h.root));
    await store.import([gsm8kFile], { run: 'gsm8k', version: 'v0', format: 'jsonl', mapping: GSM8K_MAPPING });
    const reward = readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8').replace('"score": 1.0 if correct else 0.0,', '"score": (1.0 if correct else 0.0) + 0.1 * (1.0 if "A:" in solution_str else 0.0),');
    v = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': reward });
  });
  after(() => store?.close());

  it('scores 3,932 rollouts in 4 array tasks and merges them into the report a local run gives', async () => {
    const records = new JobRecords(path.join(base, 'jobs'));
    const jobs: JobRecord[] = [];
    const runner = clusterRunner({ profile: clusterProfile(c, 'slurm'), harness: h.root, version: v, shards: 4, records, pollMs: 300, onJob: (j) => jobs.push(j) });
    const remote = await runBacktest(h, store, { version: v, trust: true, runner });
    const local = await runBacktest(h, store, { version: v, trust: true });
    assert.equal(jobs.length, 2, 'one array job per side (parent and candidate reward)');
    for (const j of jobs) {
      const final = records.get(j.id)!;
      assert.equal(final.array, 4);
      assert.match(final.remoteId ?? '', /^\d+$/, 'a Slurm job id');
      assert.equal(final.state, 'completed', JSON.stringify(final.failure));
    }
    const s = remote.stats!;
    assert.equal(s.rollouts, 3932);
    assert.equal(s.errors.after, 0, JSON.stringify(s.errors.examples));
    assert.deepEqual({ dead: s.deadGroups, ordering: s.ordering, successes: s.successes, scores: s.scores.comparison.delta }, { dead: local.stats!.deadGroups, ordering: local.stats!.ordering, successes: local.stats!.successes, scores: local.stats!.scores.comparison.delta });
    assert.equal(remote.verdict, local.verdict);
  });

  it("a shard whose task dies marks its rollouts errored, naming the array task; the rest is merged", async () => {
    const crash = readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8').replace('def compute_score(data_source, solution_str, ground_truth, extra_info=None):', 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    if (extra_info or {}).get("index") == 3000:\n        import os\n        os._exit(9)');
    const w = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': crash });
    const records = new JobRecords(path.join(base, 'jobs2'));
    const runner = clusterRunner({ profile: clusterProfile(c, 'slurm'), harness: h.root, version: w, shards: 4, records, pollMs: 300 });
    const r = await runBacktest(h, store, { version: w, trust: true, runner, maxErrorShare: 0.5 });
    const s = r.stats!;
    assert.equal(s.errors.before, 0);
    assert.ok(s.errors.after > 0 && s.errors.after <= 983, `errored ${s.errors.after}`);
    assert.match(s.errors.examples.find((e) => e.side === 'after')!.error, /no result: array task 3 of job \S+ (failed|completed)/);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { cancelJob, fetchOutputs, JobRecords, type JobRecord, monitorPolls, shellOf, submitJob, waitForJob, type LogChunk } from '../../../src/core/jobs';
import { RolloutStore } from '../../../src/core/store/store';
import { asJobUser, clusterProfile, makeHarness, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { tempDir } from '../../helpers/tmp';

// Real parts: OpenSSH's sshd on 127.0.0.1 and a one-node Slurm (munged, slurmctld, slurmd),
// jobs run as a separate local user with its own home and work directory.
const ROLLOUT_TEMPLATE = `#!/bin/bash
#SBATCH --job-name={{run}}
echo "rollout of {{version}} at {{commit}}"
echo "run: {{run}}"
mkdir -p "$EVOTRAINER_JOB_DIR/rollout_data"
for i in 1 2 3; do echo "step $i"; sleep 0.3; done
python3 - "$EVOTRAINER_JOB_DIR/rollout_data/1.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for k in range(8):
        f.write(json.dumps({"input": f"What is {k}+{k}? <b>html</b>", "output": f"The answer is {2*k}", "gts": str(2*k), "score": 1.0 if k % 2 == 0 else 0.0, "step": 1}) + "\\n")
PY
echo done
`;

describe('jobs on real Slurm over real ssh', () => {
  const dir = tempDir('evotrainer-jobs-slurm-');
  let c: ClusterInfo;
  let records: JobRecords;
  let harness: { dir: string; commit: string };
  before(() => {
    c = startCluster();
    records = new JobRecords(path.join(dir, 'records'));
    harness = makeHarness(path.join(dir, 'harness'), {
      'jobs/rollout.sbatch': ROLLOUT_TEMPLATE,
      'jobs/fail.sbatch': '#!/bin/bash\necho "loading model"\necho "ValueError: reward key missing" >&2\nexit 3\n',
      'jobs/slow.sbatch': '#!/bin/bash\necho started\nsleep 60\necho never\n',
      'jobs/shards.sbatch': '#!/bin/bash\nmkdir -p "$EVOTRAINER_JOB_DIR/out"\necho "shard $SLURM_ARRAY_TASK_ID" > "$EVOTRAINER_JOB_DIR/out/shard-$SLURM_ARRAY_TASK_ID.txt"\necho "task $SLURM_ARRAY_TASK_ID"\n[ "$SLURM_ARRAY_TASK_ID" != 2 ] || { echo "shard 2 broke" >&2; exit 7; }\n',
    });
    // Slurm's shortest time limit is a minute: this job starts first and is checked last.
    limited = submitJob({ profile: clusterProfile(c, 'slurm', { sbatch: { time: '1' } }), records, script: '#!/bin/bash\necho "training forever"\nsleep 600\n' });
  });
  let limited: Promise<JobRecord>;

  it('submits a job from a harness template, streams its log, and fetches its verl rollouts into the store', async () => {
    const profile = clusterProfile(c, 'slurm', { sbatch: { gpus: 0, cpus_per_task: 1 }, gpus: 0 });
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'rollout', version: 'v1', run: "run 'one' $(id)", outputs: ['rollout_data'] });
    assert.equal(job.state, 'pending');
    assert.match(job.remoteId!, /^\d+$/);
    // The commit's worktree on the cluster, under the job user's own home.
    assert.ok(job.workDir!.startsWith(`${c.home}/work/`), job.workDir!);
    assert.ok(job.workDir!.endsWith(`/trees/${harness.commit}`));
    const chunks: LogChunk[] = [];
    const done = await waitForJob(job.id, { records, onLog: (l) => chunks.push(l) });
    assert.equal(done.state, 'completed', JSON.stringify(done.failure));
    assert.equal(done.exitCode, 0);
    assert.match(done.source!, /^(sacct|scontrol)$/);
    const log = chunks.map((l) => l.text).join('');
    assert.equal(log, `rollout of v1 at ${harness.commit}\nrun: run 'one' $(id)\nstep 1\nstep 2\nstep 3\ndone\n`);
    assert.equal(done.logOffsets.default![''], Buffer.byteLength(log));
    assert.ok(done.elapsedSeconds !== null && done.gpuHours === 0);

    const local = path.join(dir, 'fetched');
    const store = await RolloutStore.open(path.join(dir, 'store.duckdb'));
    try {
      const f = await fetchOutputs(job.id, local, { records, store });
      assert.deepEqual(f.files.map((x) => [x.path, x.status]), [['rollout_data/1.jsonl', 'fetched']]);
      assert.equal(f.imported, 8);
      const remoteHash = asJobUser(c, `sha256sum ${done.jobDir}/rollout_data/1.jsonl`).split(' ')[0];
      assert.equal(f.files[0]!.sha256, remoteHash);
      assert.equal(readFileSync(path.join(local, 'rollout_data/1.jsonl')).length, f.files[0]!.size);
      // Fetching again copies and imports nothing new.
      const again = await fetchOutputs(job.id, local, { records, store });
      assert.deepEqual(again.files.map((x) => x.status), ['unchanged']);
      assert.equal(again.imported, 0);
      const page = await store.listRollouts({ limit: 20 });
      assert.equal(page.length, 8);
    } finally {
      store.close();
    }
  });

  it('imports rollouts into the store while the job is still writing them', async () => {
    const profile = clusterProfile(c, 'slurm');
    const script = `#!/bin/bash
mkdir -p "$EVOTRAINER_JOB_DIR/rollout_data"
for b in 0 1 2; do
  for k in 0 1 2 3; do
    printf '{"input": "q%s", "output": "a%s", "gts": "x", "score": %s, "step": 1}\\n' "$k" "$b$k" "$((k % 2))" >> "$EVOTRAINER_JOB_DIR/rollout_data/1.jsonl"
  done
  sleep 1.2
done
`;
    const job = await submitJob({ profile, records, script, run: 'live', version: 'v9', outputs: ['rollout_data'] });
    const store = await RolloutStore.open(path.join(dir, 'live.duckdb'));
    try {
      const seen: { state: string; total: number }[] = [];
      let total = 0;
      const done = await waitForJob(job.id, {
        records,
        fetch: {
          dir: path.join(dir, 'live'),
          store,
          onFetch: (f) => {
            total += f.imported ?? 0;
            seen.push({ state: records.require(job.id).state, total });
          },
        },
      });
      assert.equal(done.state, 'completed');
      assert.equal(total, 12);
      assert.ok(seen.some((x) => x.total > 0 && x.total < 12), `a partial import before the end: ${JSON.stringify(seen)}`);
      assert.equal((await store.listRollouts({ run: 'live', limit: 100 })).length, 12);
    } finally {
      store.close();
    }
  });

  it('reports a failing job with its exit code, log tail and next step', async () => {
    const profile = clusterProfile(c, 'slurm');
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'fail' });
    const done = await waitForJob(job.id, { records });
    assert.equal(done.state, 'failed');
    assert.equal(done.exitCode, 3);
    assert.match(done.failure!.message, /failed with exit code 3/);
    assert.match(done.failure!.logTail, /loading model\nValueError: reward key missing/);
    assert.match(done.failure!.nextStep, /fix the script or the harness/);
  });

  it('cancels a running job', async () => {
    const profile = clusterProfile(c, 'slurm');
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'slow' });
    let cancelled = false;
    const done = await waitForJob(job.id, {
      records,
      onLog: (l) => {
        if (!cancelled && l.text.includes('started')) {
          cancelled = true;
          void cancelJob(job.id, { records });
        }
      },
    });
    assert.equal(done.state, 'cancelled');
    assert.match(done.failure!.nextStep, /cancel was not intended/);
  });

  it('runs an array job over shards, waits for every task, fetches the outputs and names the failed task', async () => {
    const profile = clusterProfile(c, 'slurm');
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'shards', array: 4, outputs: ['out'] });
    const logs = new Map<string, string>();
    const done = await waitForJob(job.id, { records, onLog: (l) => logs.set(l.task, (logs.get(l.task) ?? '') + l.text) });
    assert.deepEqual(Object.fromEntries(Object.entries(done.tasks).map(([k, t]) => [k, [t.state, t.exitCode]])), { 0: ['completed', 0], 1: ['completed', 0], 2: ['failed', 7], 3: ['completed', 0] });
    assert.equal(done.state, 'failed');
    assert.match(done.failure!.message, /failed task\(s\): 2 \(failed, exit 7\)/);
    assert.match(done.failure!.logTail, /task 2\nshard 2 broke/);
    assert.equal(logs.get('1'), 'task 1\n');
    const f = await fetchOutputs(job.id, path.join(dir, 'shards'), { records });
    assert.deepEqual(f.files.map((x) => x.path).sort(), ['out/shard-0.txt', 'out/shard-1.txt', 'out/shard-2.txt', 'out/shard-3.txt']);
    assert.equal(readFileSync(path.join(dir, 'shards', 'out', 'shard-3.txt'), 'utf8'), 'shard 3\n');
  });

  it('never submits twice under one key, and follows N jobs with one squeue per poll', async () => {
    const profile = clusterProfile(c, 'slurm', { name: 'poll-count' });
    const a = await submitJob({ profile, records, harness: harness.dir, templateName: 'rollout', key: 'rollout:v1', version: 'v1', run: 'r' });
    const b = await submitJob({ profile, records, harness: harness.dir, templateName: 'rollout', key: 'rollout:v1', version: 'v1', run: 'r' });
    assert.equal(b.id, a.id);
    assert.equal(b.remoteId, a.remoteId);
    const more = await Promise.all([1, 2, 3, 4].map((i) => submitJob({ profile, records, script: `#!/bin/bash\nsleep 1.${i}\necho ${i}\n`, key: `extra:${i}` })));
    const shell = shellOf(profile);
    const squeue0 = shell.stats.commands.squeue ?? 0;
    const polls0 = monitorPolls();
    const all = await Promise.all([a, ...more].map((j) => waitForJob(j.id, { records, onLog: () => undefined })));
    assert.deepEqual(all.map((j) => j.state), Array(5).fill('completed'));
    const squeues = (shell.stats.commands.squeue ?? 0) - squeue0;
    const polls = monitorPolls() - polls0;
    assert.ok(squeues >= 1 && squeues <= polls, `${squeues} squeue calls for ${polls} polls of 5 jobs`);
    // One job for the key on the cluster too.
    const names = asJobUser(c, `scontrol -o show job | grep -c 'JobName=evo-rollout-${a.id}' || true`).trim();
    assert.equal(names, '1');
  });

  it('finishes an interrupted submit with the same key without a second sbatch', async () => {
    const profile = clusterProfile(c, 'slurm');
    const job = await submitJob({ profile, records, script: '#!/bin/bash\necho once\n', key: 'interrupted' });
    // As if the process died after sbatch answered but before the record was saved.
    records.save({ ...records.require(job.id), state: 'submitting', remoteId: null });
    await assert.rejects(waitForJob(job.id, { records }), /submit again with its key "interrupted"/);
    const again = await submitJob({ profile, records, script: '#!/bin/bash\necho once\n', key: 'interrupted' });
    assert.equal(again.id, job.id);
    assert.equal(again.remoteId, job.remoteId);
    assert.equal((await waitForJob(job.id, { records })).state, 'completed');
    assert.equal(asJobUser(c, `scontrol -o show job | grep -c 'JobName=evo-script-${job.id}' || true`).trim(), '1');
  });

  it('stops a job at its Slurm time limit and says to raise sbatch.time', async () => {
    const job = await limited;
    const done = await waitForJob(job.id, { records, pollMs: 1000 });
    assert.equal(done.state, 'timeout');
    assert.match(done.failure!.message, /hit its time limit/);
    assert.match(done.failure!.logTail, /training forever/);
    assert.match(done.failure!.nextStep, /Raise sbatch\.time/);
  });
});

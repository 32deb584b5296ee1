import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { cancelJob, fetchOutputs, JobRecords, LOCAL_PROFILE, SshError, SshTransport, submitJob, waitForJob, type LogChunk } from '../../../src/core/jobs';
import { asJobUser, clusterProfile, makeHarness, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { tempDir } from '../../helpers/tmp';

const TEMPLATE = `#!/bin/bash
echo "task \${SLURM_ARRAY_TASK_ID:-none} of {{version}}"
mkdir -p "$EVOTRAINER_JOB_DIR/rollout_data"
printf '{"input":"q","output":"a","gts":"a","score":1.0}\\n' > "$EVOTRAINER_JOB_DIR/rollout_data/\${SLURM_ARRAY_TASK_ID:-0}.jsonl"
sleep 1
`;

describe('the local executor (the demo default) and fetch-back', () => {
  const dir = tempDir('evotrainer-jobs-local-');
  let harness: { dir: string; commit: string };
  let c: ClusterInfo;
  before(() => {
    harness = makeHarness(path.join(dir, 'harness'), { 'jobs/train.sbatch': TEMPLATE, '.gitignore': '.evotrainer/\n' });
    c = startCluster();
  });

  it('runs a train job here from the harness worktree, with wall time and GPU-hours in its record, once per key', async () => {
    const records = new JobRecords(path.join(dir, 'records'));
    const profile = { ...LOCAL_PROFILE, gpus: 2 };
    const job = await submitJob({ profile, records, harness: harness.dir, templateName: 'train', version: 'v4', key: 'train:v4', outputs: ['rollout_data'] });
    assert.ok(job.workDir!.startsWith(path.join(harness.dir, '.evotrainer', 'jobs', 'work', 'trees')));
    const again = await submitJob({ profile, records, harness: harness.dir, templateName: 'train', version: 'v4', key: 'train:v4' });
    assert.equal(again.id, job.id);
    const log: LogChunk[] = [];
    const done = await waitForJob(job.id, { records, pollMs: 200, onLog: (l) => log.push(l) });
    assert.equal(done.state, 'completed');
    assert.equal(log.map((l) => l.text).join(''), 'task none of v4\n');
    assert.ok(done.elapsedSeconds! >= 1 && done.elapsedSeconds! < 30, String(done.elapsedSeconds));
    assert.equal(done.gpuHours, (done.elapsedSeconds! * 2) / 3600);
    // The evolve loop finds "the train job of v4" again by its key after a restart.
    assert.equal(new JobRecords(path.join(dir, 'records')).byKey('train:v4')!.state, 'completed');
    const f = await fetchOutputs(job.id, path.join(dir, 'out'), { records });
    assert.deepEqual(f.files.map((x) => x.path), ['rollout_data/0.jsonl']);
  });

  it('gives each follower (the editor, the CLI) the whole log once, from its own offsets', async () => {
    const records = new JobRecords(path.join(dir, 'records-followers'));
    const job = await submitJob({ profile: LOCAL_PROFILE, records, script: '#!/bin/bash\nfor i in 1 2 3 4; do echo "l$i"; sleep 0.3; done\n' });
    const got: Record<string, string> = { editor: '', cli: '' };
    const follow = (follower: string) => waitForJob(job.id, { records, follower, pollMs: 150, onLog: (l) => (got[follower] += l.text) });
    const first = follow('editor');
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all([first, follow('cli')]);
    assert.deepEqual(got, { editor: 'l1\nl2\nl3\nl4\n', cli: 'l1\nl2\nl3\nl4\n' });
    // A follower that comes back later has nothing left to read.
    let late = '';
    await waitForJob(job.id, { records, follower: 'cli', onLog: (l) => (late += l.text) });
    assert.equal(late, '');
  });

  it('runs array tasks side by side here, each with its SLURM_ARRAY_TASK_ID', async () => {
    const records = new JobRecords(path.join(dir, 'records-array'));
    const job = await submitJob({ profile: LOCAL_PROFILE, records, harness: harness.dir, templateName: 'train', version: 'v5', array: 3, outputs: ['rollout_data'] });
    const logs: Record<string, string> = {};
    const done = await waitForJob(job.id, { records, pollMs: 200, onLog: (l) => (logs[l.task] = (logs[l.task] ?? '') + l.text) });
    assert.equal(done.state, 'completed');
    assert.deepEqual(logs, { 0: 'task 0 of v5\n', 1: 'task 1 of v5\n', 2: 'task 2 of v5\n' });
    const f = await fetchOutputs(job.id, path.join(dir, 'out-array'), { records });
    assert.equal(f.files.length, 3);
  });

  it('cancels a job running here: its whole process group stops', async () => {
    const records = new JobRecords(path.join(dir, 'records-cancel'));
    const job = await submitJob({ profile: LOCAL_PROFILE, records, harness: harness.dir, script: '#!/bin/bash\necho up\nsleep 30 & wait\n' });
    let cancelling: Promise<unknown> | null = null;
    const done = await waitForJob(job.id, {
      records,
      pollMs: 200,
      onLog: () => void (cancelling ??= cancelJob(job.id, { records })),
    });
    await cancelling;
    assert.equal(done.state, 'cancelled');
    // No process of the job's group is left.
    assert.equal(spawnSync('kill', ['-0', '--', `-${job.remoteId}`]).status, 1);
  });

  it('fetches over tar when asked, resumes a partial copy, and replaces a corrupted one after verifying size and hash', async () => {
    const records = new JobRecords(path.join(dir, 'records-ssh'));
    const profile = clusterProfile(c, 'ssh');
    const job = await submitJob({ profile, records, script: `#!/bin/bash\nmkdir -p "$EVOTRAINER_JOB_DIR/dump dir"\nseq 1 20000 > "$EVOTRAINER_JOB_DIR/dump dir/"'a $(b).txt'\necho x > "$EVOTRAINER_JOB_DIR/dump dir/small"\n`, outputs: ['dump dir'] });
    await waitForJob(job.id, { records });
    const local = path.join(dir, 'fetched-ssh');
    const first = await fetchOutputs(job.id, local, { records, transport: 'tar' });
    assert.equal(first.transport, 'tar');
    const big = path.join(local, 'dump dir', 'a $(b).txt');
    const want = asJobUser(c, 'seq 1 20000');
    assert.equal(readFileSync(big, 'utf8'), want);
    // A copy cut short, and one with a flipped byte at the same size.
    truncateSync(big, 1000);
    const small = path.join(local, 'dump dir', 'small');
    writeFileSync(small, 'y\n');
    for (const transport of ['rsync', 'tar'] as const) {
      const again = await fetchOutputs(job.id, local, { records, transport });
      assert.equal(again.transport, transport);
      assert.equal(readFileSync(big, 'utf8'), want);
      assert.equal(readFileSync(small, 'utf8'), 'x\n');
      writeFileSync(small, 'z\n');
    }
    const last = await fetchOutputs(job.id, local, { records });
    assert.deepEqual(Object.fromEntries(last.files.map((x) => [path.basename(x.path), x.status])), { 'a $(b).txt': 'unchanged', small: 'fetched' });
    assert.equal(readFileSync(small, 'utf8'), 'x\n');
  });

  it('says a login needs a person when the key is refused, and never prompts', async () => {
    const key = path.join(dir, 'other_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const cfg = path.join(dir, 'ssh_config_other');
    writeFileSync(cfg, readFileSync(c.sshConfig, 'utf8').replace(/IdentityFile .*/, `IdentityFile ${key}`));
    const ssh = new SshTransport({ ...clusterProfile(c, 'ssh'), ssh_config: cfg }, { multiplex: false });
    await assert.rejects(ssh.exec('true'), (e: unknown) => e instanceof SshError && e.failure === 'needs-login' && /evotrainer job login/.test(e.message));
  });
});

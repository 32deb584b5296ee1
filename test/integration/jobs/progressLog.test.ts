import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { JobLogView, JobRecords, submitJob, waitForJob, type LogChunk } from '../../../src/core/jobs';
import { LiveCurves } from '../../../src/viewer/curves/live';
import { asJobUser, clusterProfile, makeHarness, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { repoRoot, tempDir } from '../../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

/**
 * A training job as verl prints it under tqdm: progress bars redrawn with '\r' and no '\n',
 * step lines between them, one step line printed over an unfinished bar, a 50,000-character
 * line, and a bar still drawing when the job ends.
 */
const PROGRESS_SCRIPT = String.raw`#!/bin/bash
for s in 1 2 3; do
  for p in 0 20 40 60 80 100; do printf '\rtrain: %3d%%|%-10s|' $p "$(head -c $((p/10)) < /dev/zero | tr '\0' '#')"; sleep 0.1; done
  printf '\n'
  echo "step:$s - actor/entropy:0.$s - critic/score/mean:$s"
done
printf 'eval: 0%%\reval: 50%%\reval: 100%%\r'
echo "step:4 - actor/entropy:0.4 - critic/score/mean:4"
python3 -c "print('L' * 50000)"
printf 'last bar 10%%\rlast bar 99%%'
`;

const EXPECTED = [
  ...[1, 2, 3].flatMap((s) => ['train: 100%|##########|', `step:${s} - actor/entropy:0.${s} - critic/score/mean:${s}`]),
  'step:4 - actor/entropy:0.4 - critic/score/mean:4',
  `${'L'.repeat(4000)}… (46000 more characters on this line)`,
  'last bar 99%',
];

describe('job logs with progress bars, from a real job on Slurm over ssh', () => {
  const dir = tempDir('evotrainer-jobs-progress-');
  let c: ClusterInfo;
  before(() => {
    c = startCluster();
  });

  it("the log shows each bar's last redraw and cut long lines; the raw log and every training-curve step are kept", async () => {
    const records = new JobRecords(path.join(dir, 'records'));
    const job = await submitJob({ profile: clusterProfile(c, 'slurm', { sbatch: { gpus: 0 }, gpus: 0 }), records, script: PROGRESS_SCRIPT });
    const chunks: LogChunk[] = [];
    const done = await waitForJob(job.id, { records, pollMs: 150, onLog: (l) => chunks.push(l) });
    assert.equal(done.state, 'completed', JSON.stringify(done.failure));
    const raw = chunks.map((l) => l.text).join('');
    assert.equal(raw, asJobUser(c, `cat ${done.jobDir}/log`), 'the chunks are the log, byte for byte');
    assert.ok(raw.includes('\rtrain:  40%|####      |'), 'the job did redraw its bars');
    const view = new JobLogView(false);
    const shown = chunks.map((l) => view.write(l.task, l.text)).join('') + view.end();
    assert.deepEqual(shown.split('\n').slice(0, -1), EXPECTED);
    const live = new LiveCurves();
    for (const l of chunks) live.feed(job.id, 'progress', null, l.task, l.text);
    assert.deepEqual(live.get(job.id)!.metrics['actor/entropy'], [[1, 0.1], [2, 0.2], [3, 0.3], [4, 0.4]], 'every step reaches the curves, the one printed over a bar too');
  });

  it('`evotrainer job submit --wait` and `job logs` print the same lines, no carriage return escaped among them', () => {
    const manifest = ['name: progress', 'domain: math', 'cluster: gpu', 'clusters:', '  gpu:', '    kind: slurm', `    host: ${c.host}`, `    ssh_config: ${c.sshConfig}`, `    work_dir: ~/work/progress-${process.pid}`, '    setup:', `      - export SLURM_CONF=${c.slurmConf}`, '    poll_seconds: 0.3', '    sbatch:', '      gpus: 0', ''].join('\n');
    const harness = makeHarness(path.join(dir, 'harness'), { 'evotrainer.yaml': manifest }).dir;
    const script = path.join(dir, 'progress.sh');
    writeFileSync(script, PROGRESS_SCRIPT);
    const cli = (args: string[]) => spawnSync(process.execPath, [bin, 'job', ...args], { encoding: 'utf8', cwd: harness, timeout: 180_000 });
    const submitted = cli(['submit', '--script', script, '--wait']);
    assert.equal(submitted.status, 0, submitted.stderr);
    assert.deepEqual(submitted.stdout.split('\n').slice(0, -1), EXPECTED);
    assert.doesNotMatch(submitted.stdout, /\r|\\x0d/);
    const id = /^(j\S+)/.exec(submitted.stderr)![1]!;
    const logs = cli(['logs', id]);
    assert.equal(logs.status, 0, logs.stderr);
    assert.equal(logs.stdout, submitted.stdout);
  });
});

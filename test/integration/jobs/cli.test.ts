import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { JobRecord } from '../../../src/core/jobs';
import { asJobUser, makeHarness, startCluster, type ClusterInfo } from '../../helpers/cluster';
import { repoRoot, tempDir } from '../../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

// The built CLI against the real sshd + Slurm, profiles from the harness manifest.
describe('evotrainer job (CLI) on real Slurm', () => {
  const dir = tempDir('evotrainer-jobs-cli-');
  let c: ClusterInfo;
  let harness: string;
  const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: harness, timeout: 120_000 });
  before(() => {
    c = startCluster();
    const manifest = [
      'name: cli-jobs',
      'domain: math',
      'cluster: gpu',
      'clusters:',
      '  gpu:',
      '    kind: slurm',
      `    host: ${c.host}`,
      `    ssh_config: ${c.sshConfig}`,
      `    work_dir: ~/work/cli-${process.pid}`,
      '    setup:',
      `      - export SLURM_CONF=${c.slurmConf}`,
      '    poll_seconds: 0.3',
      '    sbatch:',
      '      gpus: 0',
      'jobs:',
      '  train:',
      '    command: for i in 1 2 3 4 5 6 7 8 9 10; do echo "tick $i"; sleep 0.4; done; mkdir -p "$EVOTRAINER_JOB_DIR/ckpt"; echo ok > "$EVOTRAINER_JOB_DIR/ckpt/done.txt"',
      '',
    ].join('\n');
    harness = makeHarness(path.join(dir, 'harness'), { 'evotrainer.yaml': manifest }).dir;
  });

  it('reattaches after the CLI is killed mid-job: same job, the log continues, nothing submitted twice', async () => {
    const args = ['job', 'submit', '--template', 'train', '--version', 'v1', '--key', 'train:v1', '--outputs', 'ckpt', '--wait'];
    const first = spawn(process.execPath, [bin, ...args], { cwd: harness, stdio: ['ignore', 'pipe', 'pipe'] });
    let out1 = '';
    let err1 = '';
    first.stderr.on('data', (b: Buffer) => (err1 += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no "tick 2" from the first CLI: ${out1}\n${err1}`)), 60_000);
      first.stdout.on('data', (b: Buffer) => {
        out1 += b.toString();
        if (out1.includes('tick 2\n')) {
          clearTimeout(t);
          setTimeout(() => {
            first.kill('SIGKILL');
            resolve();
          }, 100);
        }
      });
    });
    await new Promise((r) => first.on('close', r));
    const id = /^(j\S+)/.exec(err1)![1]!;
    const second = cli(args);
    assert.equal(second.status, 0, second.stderr);
    assert.ok(second.stderr.startsWith(`${id} `), `the same job is reattached: ${second.stderr}`);
    const ticks = (out1 + second.stdout).split('\n').filter(Boolean);
    assert.deepEqual(ticks, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `tick ${i}`), 'each line exactly once across both CLIs');
    assert.ok(!second.stdout.includes('tick 1\n'));

    const list = JSON.parse(cli(['job', 'list', '--json']).stdout) as JobRecord[];
    assert.equal(list.length, 1);
    assert.equal(list[0]!.state, 'completed');
    assert.equal(asJobUser(c, `scontrol -o show job | grep -c 'JobName=evo-train-${id}' || true`).trim(), '1', 'one Slurm job');

    const logs = cli(['job', 'logs', id]);
    assert.equal(logs.stdout, ticks.map((t) => `${t}\n`).join(''));
    const fetch = cli(['job', 'fetch', id, '--to', path.join(dir, 'out')]);
    assert.equal(fetch.status, 0, fetch.stderr);
    assert.match(fetch.stdout, /1 file\(s\) fetched, 0 unchanged \((rsync|tar), size and sha256 verified\)/);
  });

  it('job login opens the shared connection that later batch calls reuse', () => {
    const ctl = path.join(dir, 'ctl');
    const env = { ...process.env, EVOTRAINER_SSH_CONTROL_DIR: ctl };
    const login = spawnSync(process.execPath, [bin, 'job', 'login'], { cwd: harness, encoding: 'utf8', env, timeout: 60_000 });
    assert.equal(login.status, 0, login.stderr);
    assert.match(login.stdout, /Connected to evocluster/);
    const opts = ['-F', c.sshConfig, '-o', `ControlPath=${ctl}/%C`];
    const check = spawnSync('ssh', [...opts, '-O', 'check', c.host], { encoding: 'utf8' });
    assert.equal(check.status, 0, `a master connection runs: ${check.stderr}`);
    spawnSync('ssh', [...opts, '-O', 'exit', c.host]);
  });

  it('explains a failing submit and a bad profile', () => {
    const bad = cli(['job', 'submit', '--template', 'nope']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /no job template "nope" .* add jobs\/nope\.sbatch, or jobs\.nope/);
    const prof = cli(['job', 'submit', '--template', 'train', '--profile', 'missing']);
    assert.equal(prof.status, 1);
    assert.match(prof.stderr, /no cluster profile "missing"; known: gpu/);
  });
});

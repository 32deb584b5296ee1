import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { clusterProfile, startCluster, type ClusterInfo } from '../helpers/cluster';
import { tempDir } from '../helpers/tmp';
import { cli } from './harness/helpers';

/** `evotrainer doctor` checks the harness's cluster profile over the real sshd and Slurm. */
describe('doctor: the cluster profile', () => {
  const dir = tempDir('evotrainer-doctor-cluster-');
  let c: ClusterInfo;
  before(() => {
    c = startCluster();
    const { name: _n, ...slurm } = clusterProfile(c, 'slurm');
    const manifest = { name: 'doctor', domain: 'math', clusters: { lab: slurm, nowhere: { kind: 'ssh', host: 'no-such-host.invalid', work_dir: '~/w' } }, cluster: 'lab' };
    writeFileSync(path.join(dir, 'evotrainer.yaml'), JSON.stringify(manifest, null, 2));
  });

  const cluster = (args: string[]) => {
    const r = cli(['doctor', '--json', ...args], { cwd: dir });
    const report = JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string; fix?: string }[] };
    return report.checks.find((x) => x.id === 'cluster')!;
  };

  it('reaches the default profile over ssh and finds Slurm there (scontrol standing in for sacct)', () => {
    const ch = cluster([]);
    assert.equal(ch.status, 'ok', ch.detail);
    assert.match(ch.detail, /lab \(slurm, host [^)]+\): reachable over one multiplexed ssh connection; Slurm: sbatch, squeue/);
  });

  it('an unreachable host is an error with the next step', () => {
    const ch = cluster(['--profile', 'nowhere']);
    assert.equal(ch.status, 'error');
    assert.match(ch.fix!, /host name .*ProxyJump/);
  });

  it('an unknown profile name is a clear error', () => {
    const r = cli(['doctor', '--profile', 'gpu'], { cwd: dir });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no cluster profile "gpu"; known: lab, nowhere/);
  });
});

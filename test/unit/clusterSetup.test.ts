import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot, tempDir } from '../helpers/tmp';

const script = path.join(repoRoot, 'scripts', 'cluster-setup.mjs');

describe('the test cluster: the runner stops what it started', () => {
  it('`--running` names the daemons alive by their pid files, `--stop` ends them', async () => {
    const dir = tempDir('evotrainer-cluster-state-');
    const env = { ...process.env, EVOTRAINER_CLUSTER_DIR: dir };
    const running = () => spawnSync(process.execPath, [script, '--running'], { env, encoding: 'utf8' });
    assert.equal(running().status, 1, 'nothing started yet');
    // A stand-in for sshd (starting the real one needs root and the packages): a real process with its pid file.
    const daemon = spawn('sleep', ['120'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
    mkdirSync(path.join(dir, 'ssh'), { recursive: true });
    writeFileSync(path.join(dir, 'ssh', 'sshd.pid'), `${daemon.pid}\n`);
    const up = running();
    assert.equal(up.status, 0);
    assert.equal(up.stdout.trim(), 'sshd');
    assert.equal(spawnSync(process.execPath, [script, '--stop'], { env, encoding: 'utf8' }).status, 0);
    await exited;
    assert.equal(running().status, 1);
  });

});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/tmp';

describe('npm run demo', () => {
  it('builds, creates the sample harness as a git repo, serves the extension and stops cleanly (--check)', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/demo.mjs'), '--check', '--port', '0'], { encoding: 'utf8', cwd: repoRoot, timeout: 600_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /EvoTrainer is running in VS Code at http:\/\/127\.0\.0\.1:\d+\//);
    assert.match(r.stdout, /demo check passed/);
    const ws = path.join(repoRoot, 'demo-workspace');
    assert.ok(existsSync(path.join(ws, 'evotrainer.yaml')));
    const log = spawnSync('git', ['log', '--format=%s'], { cwd: ws, encoding: 'utf8' });
    assert.match(log.stdout, /v0/);
    const lineage = spawnSync(process.execPath, [path.join(repoRoot, 'bin/evotrainer.js'), 'lineage', '--json'], { cwd: ws, encoding: 'utf8' });
    assert.equal(lineage.status, 0, lineage.stderr);
    assert.match(lineage.stdout, /"v0"/);
  });
});

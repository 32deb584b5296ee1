import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RolloutStore } from '../../src/core/store/store';
import { repoRoot, tempDir } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
const cli = (args: string[], cwd = repoRoot) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd });

describe('evotrainer import / rollouts (built CLI, real store)', () => {
  const dir = tempDir();
  const dump = path.join(dir, 'run-7', 'rollout_data');
  mkdirSync(dump, { recursive: true });
  const hostile = 'ok \u001b[31mRED\u001b]0;pwned\u0007 <script>alert(1)</script> <img src=x onerror=alert(2)>';
  writeFileSync(path.join(dump, '3.jsonl'), `${JSON.stringify({ input: 'What is 2+2?', output: hostile, gts: '4', score: 0, step: 3, acc: false })}\n`);
  const store = path.join(dir, 'store.duckdb');

  it('imports into the harness store found from the working directory, and names the run after the path', () => {
    const harness = path.join(dir, 'harness');
    mkdirSync(path.join(harness, 'sub'), { recursive: true });
    writeFileSync(path.join(harness, 'evotrainer.yaml'), 'name: h\ndomain: math\n');
    const r = cli(['import', path.join(dir, 'run-7'), '--json'], path.join(harness, 'sub'));
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(r.stdout) as { store: string; rollouts: number; files: { run: string }[] };
    assert.equal(summary.store, path.join(harness, '.evotrainer', 'store.duckdb'));
    assert.equal(summary.rollouts, 1);
    assert.equal(summary.files[0]!.run, 'run-7');
  });

  it('shows untrusted rollout text with terminal escapes neutralized', () => {
    assert.equal(cli(['import', dump, '--run', 'x', '--store', store]).status, 0);
    const r = cli(['rollouts', 'show', '1', '--store', store]);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /\u001b/, 'no raw escape reaches the terminal');
    assert.match(r.stdout, /ok \\x1b\[31mRED\\x1b\]0;pwned\\x07 <script>alert\(1\)<\/script>/);
    const json = JSON.parse(cli(['rollouts', 'show', '1', '--json', '--store', store]).stdout) as { rollout: { response: string } };
    assert.equal(json.rollout.response, hostile, 'JSON output keeps the text exact');
    assert.match(cli(['rollouts', 'list', '--store', store, '--correct', 'false']).stdout, /What is 2\+2\?/);
  });

  it('says clearly when the store is open in another process, and what to do', async () => {
    const s = await RolloutStore.open(store);
    try {
      const r = cli(['rollouts', 'list', '--store', store]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /store\.duckdb: the rollout store is open in another process .*Close it there, then retry\./s);
    } finally {
      s.close();
    }
  });

  it('rejects bad usage with exit 2 and the reason', () => {
    assert.match(cli(['import']).stderr, /give at least one file or directory/);
    assert.match(cli(['import', dump, '--format', 'jsonl']).stderr, /needs a field mapping/);
    assert.match(cli(['import', dump, '--on-error', 'ignore']).stderr, /--on-error must be fail, skip or quarantine/);
    const missing = cli(['import', path.join(dir, 'nope'), '--store', store]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /nope: no such file or directory/);
    const unknown = cli(['import', path.join(repoRoot, 'package.json'), '--store', store]);
    assert.match(unknown.stderr, /not a recognized rollout dump .*pass --format/);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ANSI_TEXT } from '../helpers/hostile';
import { repoRoot, tempDir } from '../helpers/tmp';

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
/** Any control a terminal acts on: C0 but newline and tab (a CR only where it ends a line), DEL, and the C1 set (\u009b is an 8-bit CSI). */
const RAW_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n|$)|[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/m;

describe('untrusted text never reaches the terminal as escapes, whichever command prints it (built CLI)', () => {
  const dir = tempDir();
  // Where the text enters: a data source (group ids embed it), a run name, a directory name, and the record itself.
  const source = `src${ANSI_TEXT}\u009b31mC1\u007f`;
  const run = `run\u001b[2J\u0007\u001b]8;;http://x\u0007link\u202Eevil\u2066`;
  const dump = path.join(dir, `dump\u001b[31m`, 'rollout_data');
  mkdirSync(dump, { recursive: true });
  const line = (i: number) => JSON.stringify({ input: `What is ${i >> 1}+2?\u001b[5m`, output: `answer ${i}\u0007 \u2067gnp.exe\u2069`, gts: '4', score: i % 2, step: 3, acc: i % 2 === 1, data_source: source });
  writeFileSync(path.join(dump, '3.jsonl'), [0, 1, 2, 3].map(line).join('\n') + '\n');
  const store = path.join(dir, 'store.duckdb');
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, [bin, ...args, '--store', store], { encoding: 'utf8', cwd: dir });
    assert.doesNotMatch(r.stdout, RAW_CONTROL, `evotrainer ${args[0]} printed a raw control to stdout`);
    assert.doesNotMatch(r.stderr, RAW_CONTROL, `evotrainer ${args[0]} printed a raw control to stderr`);
    return r;
  };

  it('import, rollouts list/show, health and diagnose print group ids, run names, paths and text with controls made visible', () => {
    assert.equal(cli(['import', dump, '--run', run]).status, 0);
    const list = cli(['rollouts', 'list', '--run', run]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /run\\x1b\[2J\\x07\\x1b\]8;;http:\/\/x\\x07link\\u202eevil\\u2066/, 'the run name, visible, a bidirectional override included');
    const show = cli(['rollouts', 'show', '1']);
    assert.match(show.stdout, /answer 0\\x07 \\u2067gnp\.exe\\u2069/, 'the response, its isolates escaped');
    assert.match(show.stdout, /group train:3:[0-9a-f]{16}:src\\x1b\[31mRED-ALERT\\x1b\[0m plain \\x1b\[2J\\x1b\]0;pwned-title\\x07after-title\\u009b31mC1\\u007f/);
    for (const cmd of ['health', 'diagnose']) {
      const r = cli([cmd, '--run', run]);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /run run\\x1b\[2J\\x07/, `${cmd} names the run visibly`);
    }
    // A command that fails quotes the hostile text in its error: made visible too.
    const failing = cli(['rollouts', 'list', '--sort', run]);
    assert.equal(failing.status, 1);
    assert.match(failing.stderr, /cannot sort by "run\\x1b\[2J\\x07/);
  });

  it('JSON output stays valid JSON and keeps every string exact', () => {
    const shown = cli(['rollouts', 'show', '1', '--json']);
    const json = JSON.parse(shown.stdout) as { rollout: { run_id: string; group_id: string; data_source: string; response: string } };
    assert.equal(json.rollout.run_id, run);
    assert.equal(json.rollout.data_source, source);
    assert.ok(json.rollout.group_id.endsWith(`:${source}`));
    assert.equal(json.rollout.response, 'answer 0\u0007 \u2067gnp.exe\u2069', 'the stored text is exact');
    const listed = JSON.parse(cli(['rollouts', 'list', '--json']).stdout) as { run_id: string }[];
    assert.deepEqual([...new Set(listed.map((r) => r.run_id))], [run]);
  });

  it('an error quoting a malformed record shows its controls visibly', () => {
    const bad = path.join(dir, 'bad', 'rollout_data');
    mkdirSync(bad, { recursive: true });
    writeFileSync(path.join(bad, '1.jsonl'), `{"input": \u001b]0;owned\u0007\u009b2J}\n`);
    const r = cli(['import', path.join(bad, '1.jsonl'), '--format', 'verl']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /1\.jsonl:1: not valid JSON .*\\x1b\]0;owned\\x07/);
  });
});

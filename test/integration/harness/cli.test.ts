import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Lineage } from '../../../src/core/harness/lineage';
import { repoRoot, tempDir } from '../../helpers/tmp';
import { cli, edit, REWARD, sh } from './helpers';

describe('harness commands (built CLI)', () => {
  it('`init .` initializes the current folder where it is (the shell stays in it), empty or not; a clash changes nothing', () => {
    const base = tempDir();
    const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
    for (const [name, existing] of [['empty', []], ['with notes', ['notes.txt']]] as const) {
      const dir = path.join(base, name);
      mkdirSync(dir);
      for (const f of existing) writeFileSync(path.join(dir, f), 'mine\n');
      const inode = statSync(dir).ino;
      // One shell, as a person types it: init, then the next command in the same folder.
      const r = spawnSync('sh', ['-c', '"$0" "$1" init . && "$0" "$1" lineage && pwd', process.execPath, bin], { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /current working directory/i);
      assert.match(r.stdout, /v0\s+promoted\s+pass_rate —\s+evo\/v0-root\s+★ promoted/);
      assert.equal(statSync(dir).ino, inode, 'the same folder, not a replacement');
      assert.equal(sh(dir, 'status', '--porcelain'), existing.map((f) => `?? ${f}`).join('\n'), 'the template committed; the user\'s files kept, untracked');
      assert.ok(!readdirSync(dir).some((e) => e.includes('evotrainer-init')), 'no staging folder left');
    }
    const clash = path.join(base, 'clash');
    mkdirSync(clash);
    writeFileSync(path.join(clash, 'README.md'), 'mine\n');
    const r = cli(['init', '.'], { cwd: clash });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /already has README\.md, which the template "starter" brings; move them aside \(nothing was changed\)/);
    assert.deepEqual(readdirSync(clash), ['README.md']);
    const again = cli(['init', '.'], { cwd: path.join(base, 'empty') });
    assert.equal(again.status, 1);
    assert.match(again.stderr, /is already a git repository/);
  });

  it('walks a version through its lifecycle, refuses a frozen path with the rule, and prints lineage and diff', () => {
    const dir = path.join(tempDir(), `harness "$(x)"; ü`);
    let r = cli(['init', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /v0 [0-9a-f]{12} on main/);
    const run = (...args: string[]) => cli(args, { cwd: dir });

    r = run('version', 'new', '--parent', 'v0', '--hypothesis', 'If we halve the format reward, pass_rate improves', '--target-metric', 'pass_rate', '--success', 'pass_rate > 0.3', '--layer', 'reward', '--worktree', '--json');
    assert.equal(r.status, 0, r.stderr);
    const v1 = JSON.parse(r.stdout) as { id: string; branch: string; worktree: string };
    assert.equal(v1.id, 'v1');

    writeFileSync(path.join(v1.worktree, 'data', 'eval.jsonl'), 'tampered\n');
    r = cli(['version', 'commit', 'v1'], { cwd: v1.worktree });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /refused by the action boundary.*nothing was committed:\n {2}data\/eval\.jsonl {2}\[action_boundary\.frozen: "data\/eval\.jsonl"\]/);
    sh(v1.worktree, 'checkout', '--', 'data/eval.jsonl');

    edit(v1.worktree, REWARD, '"format": 1.0', '"format": 0.5');
    r = cli(['version', 'commit', 'v1'], { cwd: v1.worktree });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /single factor: reward\/compute_score\.py/);
    for (const step of [['backtested', '--summary', 'not replayable'], ['training', '--job', '7'], ['evaluated', '--metrics', 'pass_rate=0.36']]) {
      r = run('version', 'advance', 'v1', ...step);
      assert.equal(r.status, 0, r.stderr);
    }
    r = run('promote', 'v1');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /\[ok\] success criterion: pass_rate = 0\.36, needs > 0\.3/);

    r = run('lineage', '--json');
    const l = JSON.parse(r.stdout) as Lineage;
    assert.deepEqual(l.versions.map((v) => [v.id, v.status]), [['v0', 'promoted'], ['v1', 'promoted']]);
    assert.match(run('lineage').stdout, /└─ v1 +promoted +pass_rate 0\.36 .*★ promoted/);
    r = run('diff', 'v0', 'v1');
    assert.match(r.stdout, /files:\n {2}M reward\/compute_score\.py/);
    r = run('version', 'show', 'v1');
    assert.match(r.stdout, /training → evaluated {2}by Test Person\n {4}metrics: pass_rate=0\.36/);
  });

  it('reports usage errors with exit 2 and engine errors with exit 1 and the next step', () => {
    const dir = path.join(tempDir(), 'h');
    assert.equal(cli(['init', dir]).status, 0);
    let r = cli(['version', 'new', '--parent', 'v0'], { cwd: dir });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--layer is required/);
    r = cli(['promote', 'v9'], { cwd: dir });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no version v9 in the ledger \(evo\/ledger\); known: v0/);
    r = cli(['reject', 'v0'], { cwd: dir });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--reason is required/);
    r = cli(['lineage'], { cwd: tempDir() });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not inside a git repository; create a harness with `evotrainer init DIR`/);
  });

  it('checks a manifest with file:line:col and prints the JSON Schema', () => {
    const dir = tempDir();
    const file = path.join(dir, 'evotrainer.yaml');
    writeFileSync(file, 'name: x\ndomain: math\ngates:\n  backtest: maybe\n');
    const r = cli(['schema', '--check', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:13: error: gates\\.backtest: `));
    const s = cli(['schema']);
    assert.deepEqual(JSON.parse(s.stdout), JSON.parse(readFileSync(path.join(repoRoot, 'schemas', 'evotrainer.schema.json'), 'utf8')));
  });

  it('skill apply prints the typed outcome as JSON and exits 1 when not clean', () => {
    const a = path.join(tempDir(), 'a');
    assert.equal(cli(['init', a]).status, 0);
    const run = (cwd: string, ...args: string[]) => cli(args, { cwd });
    run(a, 'version', 'new', '--parent', 'v0', '--hypothesis', 'If we halve format, pass_rate up', '--target-metric', 'pass_rate', '--success', 'pass_rate > 0.3', '--layer', 'reward', '--worktree');
    const wt = path.join(a, '.evotrainer', 'worktrees', 'v1');
    edit(wt, REWARD, '"format": 1.0', '"format": 0.5');
    for (const args of [['version', 'commit', 'v1'], ['version', 'advance', 'v1', 'backtested', '--summary', 's'], ['version', 'advance', 'v1', 'training', '--job', 'j'], ['version', 'advance', 'v1', 'evaluated', '--metrics', 'pass_rate=0.4'], ['promote', 'v1'], ['skill', 'record', '--from', 'v1', '--id', 'halve', '--category', 'reward_design', '--trigger', 'format share > 0.5']]) {
      const r = run(a, ...args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    }
    let r = run(a, 'skill', 'list');
    assert.match(r.stdout, /^halve +reward_design +math +local +format share > 0\.5$/m);
    r = run(a, 'skill', 'apply', 'halve', '--onto', 'v1', '--json');
    assert.equal(r.status, 1);
    assert.equal((JSON.parse(r.stdout) as { outcome: string }).outcome, 'already-applied');
    const b = path.join(tempDir(), 'b');
    assert.equal(cli(['init', b]).status, 0);
    r = run(b, 'skill', 'apply', path.join(a, 'skills', 'halve.md'), '--onto', 'v0', '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { outcome: string; version: string; branch: string };
    assert.deepEqual([out.outcome, out.version], ['clean', 'v1']);
    assert.match(spawnSync('git', ['show', `${out.branch}:${REWARD}`], { cwd: b, encoding: 'utf8' }).stdout, /"format": 0\.5/);
  });
});

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Lineage } from '../../../src/core/harness/lineage';
import { recordSkill } from '../../../src/core/harness/skills';
import { tempDir } from '../../helpers/tmp';
import { bin, cli, edit, evaluatedVersion, HYP, makeHarness, REWARD, sh } from './helpers';

/**
 * Kill-safety: the built CLI is started with the test hook EVOTRAINER_TEST_PAUSE_AT set to
 * a critical point (between two writes of one operation), SIGKILLed once it reports being
 * there, and the repository is then checked: git fsck clean, no lock files, no throwaway
 * index, the user's dirty files intact, and the next command completes the operation.
 */
async function killAt(point: string, args: string[], cwd: string): Promise<void> {
  const pauseFile = path.join(tempDir(), 'paused');
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, EVOTRAINER_TEST_PAUSE_AT: point, EVOTRAINER_TEST_PAUSE_FILE: pauseFile }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!existsSync(pauseFile)) {
      const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r('wait'), 25))]);
      if (done !== 'wait') assert.fail(`the command exited (${String(done)}) before reaching ${point}: ${stderr}`);
      if (Date.now() > deadline) assert.fail(`never reached ${point}`);
    }
    assert.match(readFileSync(pauseFile, 'utf8'), new RegExp(point));
  } finally {
    child.kill('SIGKILL'); // also when the test failed: a paused child must not outlive it
    await exited;
  }
}

function assertGitConsistent(root: string): void {
  assert.equal(sh(root, 'fsck', '--no-dangling', '--no-progress'), '');
  const gitDir = path.join(root, '.git');
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  assert.deepEqual(walk(gitDir).filter((f) => f.endsWith('.lock') || path.basename(f).startsWith('evotrainer-')), [], 'no lock file or throwaway index left');
}

function lineageOf(root: string): Lineage {
  const r = cli(['lineage', '--json'], { cwd: root });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Lineage;
}

const NEW_ARGS = ['version', 'new', '--parent', 'v0', '--hypothesis', HYP.hypothesis, '--target-metric', 'pass_rate', '--success', 'pass_rate > 0.3', '--layer', 'reward'];

describe('kill-safety (SIGKILL at critical points, built CLI)', () => {
  it('version creation: killed between ledger and branch, the next command restores the branch', async () => {
    const h = await makeHarness();
    writeFileSync(path.join(h.root, 'wip.txt'), 'uncommitted work');
    await killAt('version-new:after-ledger', NEW_ARGS, h.root);
    assertGitConsistent(h.root);
    const l = lineageOf(h.root);
    assert.deepEqual(l.versions.map((v) => [v.id, v.branchState]), [['v0', 'ok'], ['v1', 'missing']]);
    const r = cli([...NEW_ARGS, '--slug', 'second'], { cwd: h.root });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resumed: created branch evo\/v1-/);
    assert.deepEqual(lineageOf(h.root).versions.map((v) => [v.id, v.branchState]), [['v0', 'ok'], ['v1', 'ok'], ['v2', 'ok']]);
    assert.equal(readFileSync(path.join(h.root, 'wip.txt'), 'utf8'), 'uncommitted work');
    assertGitConsistent(h.root);
  });

  it('intervention commit: killed between commit and ledger, the next command records it from the trailers', async () => {
    const h = await makeHarness();
    const r0 = cli([...NEW_ARGS, '--worktree'], { cwd: h.root });
    assert.equal(r0.status, 0, r0.stderr);
    const wt = path.join(h.root, '.evotrainer', 'worktrees', 'v1');
    edit(wt, REWARD, '"format": 1.0', '"format": 0.5');
    await killAt('version-commit:after-commit', ['version', 'commit', 'v1'], wt);
    assertGitConsistent(h.root);
    const tip = sh(h.root, 'rev-parse', 'refs/heads/' + lineageOf(h.root).versions[1]!.branch);
    assert.equal(lineageOf(h.root).versions[1]!.branchState, 'moved', 'the ledger has not seen the commit yet');
    const r = cli(['version', 'advance', 'v1', 'backtested', '--summary', 'not replayable: env change'], { cwd: h.root });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resumed: recorded the intervention commit/);
    const v1 = lineageOf(h.root).versions[1]!;
    assert.deepEqual([v1.commit, v1.branchState, v1.status], [tip, 'ok', 'backtested']);
    assert.equal(sh(wt, 'status', '--porcelain'), '');
  });

  it('promotion: killed between ledger and the promoted line, the next command moves evo/promoted', async () => {
    const h = await makeHarness();
    const v1 = await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.4 });
    const v0 = sh(h.root, 'rev-parse', 'evo/promoted');
    await killAt('promote:after-ledger', ['promote', 'v1'], h.root);
    assertGitConsistent(h.root);
    assert.equal(sh(h.root, 'rev-parse', 'evo/promoted'), v0, 'the ref has not moved yet');
    assert.equal(lineageOf(h.root).promoted?.tipMatches, false);
    const r = cli([...NEW_ARGS.map((a) => (a === 'v0' ? 'v1' : a))], { cwd: h.root });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resumed: moved evo\/promoted to v1/);
    assert.equal(sh(h.root, 'rev-parse', 'evo/promoted'), v1.commit);
    const l = lineageOf(h.root);
    assert.equal(l.promoted?.tipMatches, true);
    assert.equal(l.versions[1]!.status, 'promoted');
  });

  it('cherry-pick of a skill: killed in its throwaway index, the next command removes the index and applies', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format', category: 'reward_design', trigger: 'format share > 0.5' });
    const code = await makeHarness('code', { domain: 'coding' });
    await killAt('skill-apply:in-throwaway-index', ['skill', 'apply', skill.file, '--onto', 'v0'], code.root);
    const left = readdirSync(path.join(code.root, '.git')).filter((f) => f.startsWith('evotrainer-apply-'));
    assert.equal(left.length, 1, 'the kill left the throwaway index');
    const r = cli(['skill', 'apply', skill.file, '--onto', 'v0'], { cwd: code.root });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`resumed: removed .*${left[0]}, the throwaway index of an interrupted command`));
    assertGitConsistent(code.root);
    assert.match(sh(code.root, 'show', `evo/v1-skill-halve-format:${REWARD}`), /"format": 0\.5/);
  });

  it('cherry-pick of a skill: killed between ledger and branch, then `git gc --prune=now`: nothing is half-applied and the branch is restored', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format', category: 'reward_design', trigger: 'format share > 0.5' });
    const code = await makeHarness('code', { domain: 'coding' });
    writeFileSync(path.join(code.root, REWARD), readFileSync(path.join(code.root, REWARD), 'utf8') + '# my local note\n');
    await killAt('skill-apply:after-ledger', ['skill', 'apply', skill.file, '--onto', 'v0'], code.root);
    // Only the ledger names the new commit so far: a prune of unreachable objects must not take it.
    sh(code.root, 'gc', '--prune=now', '--quiet');
    assertGitConsistent(code.root);
    assert.equal(sh(code.root, 'status', '--porcelain'), 'M reward/compute_score.py', 'the checkout holds only the user\'s own change');
    assert.match(readFileSync(path.join(code.root, REWARD), 'utf8'), /"format": 1\.0[\s\S]*# my local note\n$/);
    const r = cli(['reject', 'v1', '--reason', 'tested the restore path'], { cwd: code.root });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /resumed: created branch evo\/v1-skill-halve-format/);
    assert.match(sh(code.root, 'show', `evo/v1-skill-halve-format:${REWARD}`), /"format": 0\.5/);
    assert.equal(sh(code.root, 'for-each-ref', 'refs/evotrainer/'), '', 'the ref that kept the commit alive is gone once its branch exists');
  });

  it('an entry whose commit was pruned before this protection existed is named with the command that settles it', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format', category: 'reward_design', trigger: 'format share > 0.5' });
    const code = await makeHarness('code', { domain: 'coding' });
    await killAt('skill-apply:after-ledger', ['skill', 'apply', skill.file, '--onto', 'v0'], code.root);
    // As a repository from before the keep-alive ref: nothing references the commit, and gc prunes it.
    for (const ref of sh(code.root, 'for-each-ref', '--format=%(refname)', 'refs/evotrainer/').split('\n').filter(Boolean)) sh(code.root, 'update-ref', '-d', ref);
    sh(code.root, 'reflog', 'expire', '--expire=now', '--all');
    sh(code.root, 'gc', '--prune=now', '--quiet');
    const lost = cli(['version', 'new', '--parent', 'v0', '--hypothesis', 'h', '--target-metric', 'pass_rate', '--success', 'pass_rate > 0.3', '--layer', 'reward'], { cwd: code.root });
    assert.equal(lost.status, 0, lost.stderr);
    const hint = /record the loss: `evotrainer (reject v1 --reason '[^']+')`/.exec(lost.stderr);
    assert.ok(hint, lost.stderr);
    // The printed command, as a shell reads it.
    const r = spawnSync('sh', ['-c', `"$0" "$1" ${hint[1]}`, process.execPath, bin], { cwd: code.root, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const after = cli(['reject', 'v2', '--reason', 'not needed'], { cwd: code.root });
    assert.equal(after.status, 0, after.stderr);
    assert.doesNotMatch(after.stderr, /missing/, 'settled: no longer reported');
    assert.deepEqual(lineageOf(code.root).versions.map((v) => [v.id, v.status]), [['v0', 'promoted'], ['v1', 'rejected'], ['v2', 'rejected']]);
    assert.match(lineageOf(code.root).versions[1]!.decision?.reasons ?? '', /was lost before its branch existed/);
  });

  it('init: killed before the harness is moved into place, the folder stays free and init can be rerun', async () => {
    const base = tempDir();
    const dir = path.join(base, 'new harness');
    await killAt('init:before-rename', ['init', dir], base);
    assert.equal(existsSync(dir), false);
    const r = cli(['init', dir], { cwd: base });
    assert.equal(r.status, 0, r.stderr);
    assertGitConsistent(dir);
    assert.deepEqual(lineageOf(dir).versions.map((v) => v.id), ['v0']);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseArgs } from '../../src/cli/args';
import { commands } from '../../src/cli/main';
import { requireSharedData, sharedData } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
/** Every ```sh block of the README. */
const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** A block's commands: continuation lines joined, comments dropped, `a && b` split. */
function commandsOf(block: string): string[] {
  return block.replace(/\\\n\s*/g, ' ').split('\n')
    .map((l) => l.replace(/\s+#(?=[^"]*("[^"]*"[^"]*)*$).*$/, '').replace(/^#.*$/, '').trim())
    .flatMap((l) => l.split(' && '))
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Shell words, with "double" and 'single' quotes. */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

describe('the README, as written', () => {
  it('every `npx evotrainer` command of every block names a real command with options it accepts', () => {
    const lines = blocks.flatMap(commandsOf).filter((l) => l.startsWith('npx evotrainer '));
    assert.ok(lines.length > 40, `${lines.length} commands`);
    const wrong = lines.flatMap((l) => {
      const [, , name, ...rest] = words(l);
      const cmd = commands[name!];
      if (!cmd) return [`${l}: no command "${name}"`];
      try {
        parseArgs(rest, cmd.flags);
        return [];
      } catch (err) {
        return [`${l}: ${(err as Error).message}`];
      }
    });
    assert.deepEqual(wrong, []);
    // The other commands are the project's own npm scripts.
    const npm = blocks.flatMap(commandsOf).filter((l) => l.startsWith('npm '));
    const scripts = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const l of npm) {
      const [, verb, script] = words(l);
      assert.ok(verb === 'test' ? 'test' in scripts : verb === 'run' && script! in scripts, l);
    }
  });

  it('the harness walk-through runs as written: init, import, version, commit, backtest, advance, promote, lineage, diff, skill record and apply', () => {
    const block = blocks.find((b) => b.startsWith('npx evotrainer init my-harness'));
    assert.ok(block, 'the harness block');
    // A clone with the shared data beside it, as the README's paths expect.
    const base = tempDir('evotrainer-readme-');
    const clone = path.join(base, 'evotrainer');
    mkdirSync(clone);
    symlinkSync(path.dirname(sharedData), path.join(base, 'shared'));
    // The one step the README leaves to the person: the single-factor edit.
    const edit = `sed -i 's/"format": 1.0 if pred/"format": 0.5 if pred/' .evotrainer/worktrees/v1/reward/compute_score.py`;
    const script = [
      'set -eu',
      // `npx evotrainer` inside the clone resolves to its bin; here, the same bin by path.
      `npx() { [ "$1" = evotrainer ] || exit 90; shift; echo "+ evotrainer $*" >&2; "${process.execPath}" "${bin}" "$@"; }`,
      block.replace(/^# edit reward\/.*$/m, (l) => `${l}\n${edit}`),
      'git -C ../other log --format=%s evo/v1-skill-halving-the-format-reward-revives >/dev/null',
    ].join('\n');
    const r = spawnSync('bash', ['-c', script], { cwd: clone, encoding: 'utf8', timeout: 240_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /Imported 3932 rollouts/);
    assert.match(r.stdout, /verdict: PASS/);
    assert.match(r.stdout, /v1 promoted \(gate\)/);
    assert.match(r.stdout, /└─ v1\s+promoted\s+pass_rate 0\.44 \(\+0\.04\)/);
    assert.match(r.stdout, /M reward\/compute_score\.py/);
    assert.match(r.stdout, /recorded skill halving-the-format-reward-revives-dead/);
    assert.match(r.stdout, /clean: v1 on evo\/v1-skill-halving-the-format-reward-revives/);
  });

  it('the PATH recipe puts `evotrainer` on PATH: it runs from a folder outside the clone', () => {
    const block = blocks.find((b) => b.includes('ln -sf "$PWD/bin/evotrainer.js"'));
    assert.ok(block, 'the PATH block');
    const home = tempDir('evotrainer-home-');
    const env = { ...process.env, HOME: home, PATH: `${path.join(home, '.local', 'bin')}:${path.dirname(process.execPath)}:/usr/bin:/bin` };
    // As written: the first line in the clone, the second wherever the shell is (here: $HOME).
    const r = spawnSync('bash', ['-c', `set -eu\n${commandsOf(block).join('\n')}\nevotrainer init my-harness && cd my-harness && evotrainer lineage`], { cwd: repoRoot, env, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/m, 'the version');
    assert.match(r.stdout, /v0\s+promoted\s+pass_rate —\s+evo\/v0-root/);
    assert.equal(spawnSync('git', ['-C', path.join(home, 'my-harness'), 'rev-parse', 'evo/promoted'], { encoding: 'utf8' }).status, 0);
  });
});

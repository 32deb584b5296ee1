import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/tmp';

/**
 * The README's main job, whole: real GRPO training on two toy domains (python3), the
 * evolve loop's decisions, then the extension served in code-server (--check).
 */
describe('npm run demo', () => {
  it('evolves toy-agentic (the leak branch rejected, the leak closed, a filter promoted), reuses the skill on toy-math, serves the editor', () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/demo.mjs'), '--fresh', '--check', '--port', '0'], { encoding: 'utf8', cwd: repoRoot, timeout: 900_000 });
    const out = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.status, 0, out);
    // The leak-exploiting branch: the highest raw score, rejected by the gate naming the leak.
    const rejected = /v1: REJECTED — gate: (.*)/.exec(r.stdout)?.[1] ?? '';
    assert.match(rejected, /leak \(git_history_share\): information leak: \d+\.\d% of v1's eval trajectories read the answer from git history/);
    // …and by what the agent was shown, whatever the command: the answer, with the turn and the command that showed it.
    assert.match(rejected, /leak \(answer_in_context_share\): information leak: \d+\.\d% of v1's eval trajectories were shown their answer before writing it .*turn \d+: git log -p -n 3/);
    const raw = [...r.stdout.matchAll(/(v\d): evaluated pass_rate (\d\.\d+)/g)].slice(0, 4).map((m) => [m[1], Number(m[2])] as const);
    assert.equal(raw.sort((a, b) => b[1] - a[1])[0]![0], 'v1', `highest raw score: ${JSON.stringify(raw)}`);
    // The leak closed by an environment intervention, then a signal intervention promoted.
    assert.match(r.stdout, /v2: PROMOTED/);
    assert.match(r.stdout, /round 2: v2 from v0 \[environment\] "If we scrub git history/);
    assert.match(r.stdout, /round 3: v3 from v2 \[filter\]/);
    assert.match(r.stdout, /v3: PROMOTED/);
    assert.match(r.stdout, /honest score \(eval with git history scrubbed\), v0 → v3: .* — beyond the interval/);
    // The skill recorded on toy-agentic and reused on toy-math, then shared (two domains).
    assert.match(r.stdout, /chose skill zero-variance-filter .*\n.*validated before in toy-agentic v3 \(toy-swe\)/);
    assert.match(r.stdout, /shared zero-variance-filter → /);
    assert.match(r.stdout, /EvoTrainer is running in VS Code at http:\/\/127\.0\.0\.1:\d+\//);
    assert.match(r.stdout, /demo check passed/);
    const seconds = Number(/loop finished in (\d+) s/.exec(r.stdout)?.[1]);
    assert.ok(seconds > 0, 'the loop reports its time');
    assert.ok(existsSync(path.join(repoRoot, 'demo-workspace', 'skill-library', 'zero-variance-filter.md')));
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { repoRoot, tempDir } from '../helpers/tmp';

// A small-scale smoke of `npm run bench:ingest`; the full-scale run (1,000,000 rollouts)
// is its own script. Timing targets are not asserted here: at this scale fixed costs
// dominate, and a timed test would only measure the machine.
describe('ingest benchmark (smoke)', () => {
  it('generates, imports against the read_json baseline, queries, and prints every ratio', () => {
    const dir = tempDir('evotrainer-bench-');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/ingest.ts', '--rollouts', '3000', '--dir', dir, '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /throughput \d+\.\d\d× baseline/);
    assert.match(r.stdout, /303 SWE trajectories with steps .* the parse/);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { rollouts: number; ingestRatio: number; oneP95Ms: number; pageP95Ms: number; sweRatio: number };
    assert.equal(result.rollouts, 3000);
    for (const k of ['ingestRatio', 'oneP95Ms', 'pageP95Ms', 'sweRatio'] as const) assert.ok(Number.isFinite(result[k]) && result[k] > 0, `${k} = ${result[k]}`);
  });
});

// A small-scale smoke of `npm run bench:backtest` (100,000 rollouts at full scale).
describe('backtest benchmark (smoke)', () => {
  it('scores cached rollouts through the python3 workers and prints the ratio to a plain loop', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/backtest.ts', '--rollouts', '4000', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /end to end \(store read \+ worker start-up \+ scoring\) \d+\.\d\d× the plain loop/);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { rollouts: number; e2eRate: number; ratio: number; errors: number };
    assert.equal(result.rollouts, 4000);
    assert.equal(result.errors, 0);
    assert.ok(result.e2eRate > 0 && result.ratio > 0);
  });
});

// A smoke of `npm run bench:activation` (activate() with a stand-in vscode module).
describe('activation benchmark (smoke)', () => {
  it('activates the built extension and prints its cost against the engine bundle it defers', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/activation.ts', '--runs', '1', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /activation costs \d+\.\d\d× the engine load it defers/);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { activationMs: number; engineMs: number };
    assert.ok(result.activationMs > 0 && result.engineMs > 0);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { repoRoot } from '../../helpers/tmp';

// A small-scale smoke of `npm run bench:jobs` (50 jobs followed for a minute) on the real
// test cluster. Timings are printed, not asserted; the squeue bound is.
describe('jobs benchmark (smoke)', () => {
  it('follows concurrent Slurm jobs with at most one squeue per poll and prints the multiplexing ratio', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/jobs.ts', '--jobs', '6', '--seconds', '2', '--poll', '0.5', '--commands', '5', '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /\d+ squeue calls in \d+ polls/);
    assert.match(r.stdout, /overhead \d+\.\d+× of a fresh connection/);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!) as { completed: number; squeueCalls: number; polls: number; overheadRatio: number };
    assert.equal(res.completed, 6);
    assert.ok(res.squeueCalls >= 1 && res.squeueCalls <= res.polls, JSON.stringify(res));
    assert.ok(Number.isFinite(res.overheadRatio) && res.overheadRatio > 0);
  });
});

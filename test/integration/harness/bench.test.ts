import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { repoRoot, tempDir } from '../../helpers/tmp';

// A small-scale smoke of `npm run bench:lineage` (1,000 versions is the script's default).
// No timing assertion: at 50 versions fixed costs dominate and a timed test measures the machine.
describe('lineage benchmark (smoke)', () => {
  it('builds 50 versions with evidence, reads them on both paths and prints the ratios', () => {
    const dir = tempDir('evotrainer-bench-lineage-');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/lineage.ts', '--versions', '50', '--runs', '2', '--dir', dir, '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /lineage, git read path .* ms {2}ratio \d+\.\d\d× baseline/);
    assert.match(r.stdout, /lineage, isomorphic-git read path .* ms {2}ratio \d+\.\d\d× baseline/);
    const res = JSON.parse(r.stdout.trim().split('\n').pop()!) as { versions: number; ratio: number; gitMs: number; isomorphicMs: number; faster: string };
    assert.equal(res.versions, 50);
    for (const k of ['ratio', 'gitMs', 'isomorphicMs'] as const) assert.ok(Number.isFinite(res[k]) && res[k] > 0, `${k} = ${res[k]}`);
    assert.ok(['git', 'isomorphic-git'].includes(res.faster));
  });
});

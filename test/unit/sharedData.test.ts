import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gateOnSharedData, readsSharedData, sharedDataProblem } from '../../scripts/shared-data.mjs';
import { repoRoot, tempDir } from '../helpers/tmp';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []);
}
const allTests = testFiles(path.join(repoRoot, 'test'));

describe('tests without ../shared/data: one failure naming the path', () => {
  it('every test file reading the shared data declares it at its top level (the runner finds them by it)', () => {
    const readers = allTests.filter((f) => /\b(sweDir|gsm8kFile|sharedData)\b/.test(readFileSync(f, 'utf8')) && !f.endsWith('sharedData.test.ts'));
    assert.ok(readers.length >= 15, `found only ${readers.length}`);
    assert.deepEqual(readers.filter((f) => !readsSharedData(f)).map((f) => path.relative(repoRoot, f)), []);
  });

  it('with the data beside the checkout, every file runs', () => {
    assert.equal(sharedDataProblem(repoRoot), null);
    assert.deepEqual(gateOnSharedData(repoRoot, allTests), { run: allTests, notRun: [], failure: null });
  });

  it('without it, the runner leaves the readers out and reports one failure naming the path', () => {
    const fresh = path.join(tempDir('evotrainer-clone-'), 'evotrainer'); // a clone with nothing beside it
    const gate = gateOnSharedData(fresh, allTests);
    const expected = path.join(path.dirname(fresh), 'shared', 'data');
    assert.match(gate.failure ?? '', new RegExp(`^the shared test data is missing: expected ${expected.replace(/[/.]/g, '\\$&')}/swe-mini-swe-agent and .*\\(\\.\\./shared/data beside the project root; see "Tests" in README.md\\); \\d+ test file\\(s\\) that read it were not run: .*test/unit/importers/miniSweAgent\\.test\\.ts(,|$)`));
    assert.ok(gate.notRun.length >= 15 && gate.run.length > gate.notRun.length, `${gate.run.length} run, ${gate.notRun.length} not run`);
    assert.deepEqual([...gate.run, ...gate.notRun].sort(), [...allTests].sort());
    assert.ok(gate.notRun.every(readsSharedData) && !gate.run.some(readsSharedData));
  });

  it('a reading test file run alone without the data fails once, with the path', () => {
    // A copy of the test helpers in a clone that has no ../shared/data beside it.
    const fresh = path.join(tempDir('evotrainer-clone-'), 'evotrainer');
    for (const f of ['scripts/shared-data.mjs', 'test/helpers/data.ts', 'test/helpers/tmp.ts']) {
      mkdirSync(path.dirname(path.join(fresh, f)), { recursive: true });
      copyFileSync(path.join(repoRoot, f), path.join(fresh, f));
    }
    const probe = path.join(fresh, 'test', 'unit', 'reader.test.ts');
    mkdirSync(path.dirname(probe), { recursive: true });
    writeFileSync(probe, [
      "import { it } from 'node:test';",
      "import { requireSharedData, sweDir } from '../helpers/data';",
      'requireSharedData();',
      ...[1, 2, 3].map((i) => `it('reads ${i}', () => { void sweDir; });`),
    ].join('\n'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', probe], { cwd: repoRoot, encoding: 'utf8', env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT')) });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^# fail 1$/m);
    assert.match(r.stdout, /^# pass 0$/m);
    assert.ok(r.stdout.includes(`the shared test data is missing: expected ${path.join(path.dirname(fresh), 'shared', 'data', 'swe-mini-swe-agent')}`), r.stdout);
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { intervalMeets, parseCriterion } from '../../src/core/gate/criterion';
import { EVIDENCE_CHECKS, RECORDED_CHECKS } from '../../src/core/gate/gate';
import { decide, type GateCheck } from '../../src/core/gate/types';
import { repoRoot } from '../helpers/tmp';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

const check = (passed: boolean | null): GateCheck => ({ check: 'c', category: 'validity', passed, detail: '' });

describe('the promotion gate', () => {
  it('decides from its checks: a failure rejects, an undecided check goes to a person, else promote', () => {
    assert.equal(decide([check(true), check(null), check(false)]), 'reject');
    assert.equal(decide([check(true), check(null)]), 'needs_human');
    assert.equal(decide([check(true), check(true)]), 'promote');
  });

  it('judges a criterion on a whole interval: all of it, none of it, or within noise', () => {
    const c = parseCriterion(' pass_rate_delta >= 0.05 ')!;
    assert.deepEqual(c, { metric: 'pass_rate_delta', op: '>=', value: 0.05 });
    assert.equal(intervalMeets(0.06, 0.2, c), true);
    assert.equal(intervalMeets(-0.1, 0.01, c), false);
    assert.equal(intervalMeets(0.01, 0.1, c), null);
    assert.equal(parseCriterion('format looks better to a reader'), null);
  });

  it('names each check once, in the order the report lists them', () => {
    const names = EVIDENCE_CHECKS.map((c) => c.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(names.slice(0, 4), ['evaluation rollouts', 'action boundary', 'declared bug classes', 'leak']);
    assert.ok(names.indexOf('primary non-regression') < names.indexOf('where the gain came from'), 'the flips read what the primary and R4 compared');
    assert.deepEqual(RECORDED_CHECKS.map((c) => c.name), ['evaluated', 'primary metric', 'success criterion', 'side effects']);
  });

  it('has one decision path: outside src/core/gate nothing runs, records or applies the gate by itself', () => {
    // The CLI, the editor and the loop go through decideAndApply; versions.ts only writes the transition it is given.
    const direct = /\b(?:runGate|recordGate|judgeRecorded|markPromoted)\(/;
    const offenders = files(path.join(repoRoot, 'src'))
      .filter((f) => !f.startsWith(path.join(repoRoot, 'src/core/gate') + path.sep))
      .filter((f) => /\.ts$/.test(f))
      .filter((f) => readFileSync(f, 'utf8').split('\n').some((l) => direct.test(l) && !/^\s*(?:export )?(?:async )?function /.test(l)));
    assert.deepEqual(offenders, []);
    // The pattern does catch a call.
    assert.ok(direct.test('const r = await runGate(h, store, { version });'));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { comparePaired, pairedBootstrap, permutationTest } from '../../../src/core/backtest/stats';
import { computeStats, type ScoredRollout } from '../../../src/core/backtest/report';
import { seedOf } from '../../../src/core/util/random';

const tasks = (values: number[]) => new Map(values.map((v, i) => [`t${i}`, v]));

describe('paired statistics over tasks', () => {
  it('a 30-task eval with a one-task swing is within noise, not a verdict', () => {
    // One AIME-sized step: 30 tasks, one flips from wrong to right (+3.3 points).
    const before = tasks(Array.from({ length: 30 }, (_, i) => (i < 12 ? 1 : 0)));
    const after = tasks(Array.from({ length: 30 }, (_, i) => (i < 13 ? 1 : 0)));
    const c = comparePaired(before, after);
    assert.ok(Math.abs(c.delta - 1 / 30) < 1e-12);
    assert.equal(c.withinNoise, true);
    assert.equal(c.direction, 'none');
    assert.ok(c.pValue !== null && c.pValue > 0.05, `p ${c.pValue}`);
    assert.match(c.method, /permutation/);
  });

  it('the same share of flips over 500 tasks is a confident improvement', () => {
    const n = 500;
    const before = tasks(Array.from({ length: n }, (_, i) => (i % 10 < 4 ? 1 : 0)));
    const after = tasks(Array.from({ length: n }, (_, i) => (i % 10 < 5 ? 1 : 0)));
    const c = comparePaired(before, after);
    assert.equal(c.direction, 'up');
    assert.ok(c.ci[0] > 0 && c.ci[1] < 0.2);
    assert.equal(c.pValue, null, 'no permutation test needed on a large sample');
  });

  it('pairs by task: tasks on one side only are left out', () => {
    const c = comparePaired(new Map([['a', 0], ['b', 1]]), new Map([['b', 1], ['c', 0]]));
    assert.equal(c.n, 1);
  });

  it('the permutation test is exact for small samples and the bootstrap is seeded', () => {
    assert.equal(permutationTest([1, 1, 1]), 2 / 8);
    assert.equal(permutationTest([0, 0]), 1);
    const d = [0.1, -0.2, 0.3, 0.05, 0.4, -0.1];
    assert.deepEqual(pairedBootstrap(d, { seed: 3 }), pairedBootstrap(d, { seed: 3 }));
  });
});

const side = (score: number | null, extra: Partial<ScoredRollout['before']> = {}) => ({ score, error: null, truncated: false, filtered: false, ...extra });
const row = (id: number, group: string, correctness: number, before: number, after: number, extra: Partial<ScoredRollout['after']> = {}): ScoredRollout => ({ id, task: group, group, correctness, failureMode: correctness ? 'success' : 'wrong_answer', before: side(before), after: side(after, extra) });

describe('backtest statistics', () => {
  it('counts dead-group revival, new ordering violations and the invariants they break', () => {
    const rows = [
      // g1: dead before (all 0), revived after.
      row(1, 'g1', 0, 0, 0.1),
      row(2, 'g1', 0, 0, 0),
      // g2: a correct rollout now scored below a wrong one.
      row(3, 'g2', 1, 1, 0.2),
      row(4, 'g2', 0, 0, 0.5),
      // g3: a success truncated.
      row(5, 'g3', 1, 1, 0, { truncated: true }),
      row(6, 'g3', 1, 1, 1),
    ];
    const s = computeStats(rows, [
      { check: 'ordering_violations', between: [1, 0], max: 0 },
      { check: 'successes_truncated', max_share: 0.2 },
      { check: 'dead_group_ratio', max: 0.5 },
    ]);
    assert.equal(s.deadGroups.before, 2); // g1, g3
    assert.equal(s.deadGroups.revived, 2);
    assert.equal(s.ordering.newViolations, 1);
    assert.deepEqual(s.ordering.examples[0], { higher: 3, lower: 4, group: 'g2' });
    assert.equal(s.successes.truncated, 1);
    assert.equal(s.successes.penalized, 2);
    assert.deepEqual(s.invariants.map((i) => i.passed), [false, false, true]);
    assert.match(s.invariants[1]!.detail, /1 of 3 successful rollouts newly truncated \(33\.3%\)/);
  });

  it('errored rollouts are counted and left out of the scores', () => {
    const rows = [row(1, 'g', 1, 1, 1), { ...row(2, 'g', 0, 0, 0), after: { score: null, error: 'TimeoutError', truncated: false, filtered: false } }];
    const s = computeStats(rows);
    assert.equal(s.errors.after, 1);
    assert.equal(s.scores.after.n, 1);
    assert.equal(s.errors.examples[0]!.error, 'TimeoutError');
  });

  it('the same comparison gives the same interval whatever order the store returned the tasks in, seeded from the version pair', () => {
    const values = Array.from({ length: 80 }, (_, i) => [`task-${(i * 37) % 80}`, ((i * 7919) % 13) / 13, ((i * 104729) % 11) / 11] as const);
    const shuffled = [...values].sort((x, y) => ((x[1] * 1000 + x[2]) % 7) - ((y[1] * 1000 + y[2]) % 7) || x[0].localeCompare(y[0]));
    assert.notDeepEqual(shuffled.map((v) => v[0]), values.map((v) => v[0]));
    const seed = seedOf('v0→v4');
    const run = (vs: typeof values) => comparePaired(new Map(vs.map((v) => [v[0], v[1]])), new Map(vs.map((v) => [v[0], v[2]])), { seed });
    const first = run(values);
    assert.deepEqual(run(shuffled), first);
    assert.deepEqual(run(values), first);
    // Another version pair draws other resamples (its own, reproducible, interval).
    assert.equal(seedOf('v0→v4'), seed);
    assert.notEqual(seedOf('v0→v5'), seed);
    assert.notDeepEqual(comparePaired(new Map(values.map((v) => [v[0], v[1]])), new Map(values.map((v) => [v[0], v[2]])), { seed: seedOf('v0→v5') }).ci, first.ci);
  });
});

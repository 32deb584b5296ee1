import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auc, cohensD } from '../../src/core/diagnose/validate';

describe('separation statistics', () => {
  it('AUC is the chance a success outscores a failure, ties counting half', () => {
    assert.equal(auc([3, 4], [1, 2]), 1);
    assert.equal(auc([1, 2], [3, 4]), 0);
    assert.equal(auc([1], [1]), 0.5);
    assert.equal(auc([1, 2], [2, 3]), 0.125);
    assert.ok(Number.isNaN(auc([], [1])));
  });
  it("Cohen's d in pooled standard deviations", () => {
    assert.equal(cohensD([1, 1], [1, 1]), 0);
    assert.ok(Math.abs(cohensD([2, 4], [0, 2]) - 2 / Math.SQRT2) < 1e-12);
  });
});

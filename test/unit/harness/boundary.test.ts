import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkBoundary, checkSingleFactor, factorUnits } from '../../../src/core/harness/boundary';
import { diffConfigText, flattenKeys, type ChangeSet } from '../../../src/core/harness/changes';
import { parseManifest } from '../../../src/core/harness/manifest';

const HASH = `sha256:${'a'.repeat(64)}`;
const parent = parseManifest(`name: h\ndomain: math\neval_set: {path: data/eval.jsonl, hash: ${HASH}}\naction_boundary:\n  editable: [reward/, configs/]\n  frozen: [core/, data/]\n`);
const changes = (over: Partial<ChangeSet>): ChangeSet => ({ files: [], keys: [], opaque: [], manifest: parent, evalHash: HASH, ...over });

describe('action boundary', () => {
  it('passes edits inside the editable paths', () => {
    assert.deepEqual(checkBoundary(parent, changes({ files: [{ status: 'M', path: 'reward/score.py' }] })), []);
  });
  it('names the frozen entry that refuses a path', () => {
    const v = checkBoundary(parent, changes({ files: [{ status: 'M', path: 'core/trainer.py' }, { status: 'A', path: 'data/extra.jsonl' }] }));
    assert.deepEqual(v.map((x) => [x.path, x.rule]), [
      ['core/trainer.py', 'action_boundary.frozen: "core/"'],
      ['data/extra.jsonl', 'action_boundary.frozen: "data/"'],
    ]);
  });
  it('refuses paths outside the editable list', () => {
    const [v] = checkBoundary(parent, changes({ files: [{ status: 'M', path: 'README.md' }] }));
    assert.equal(v?.rule, 'action_boundary.editable: [reward/, configs/]');
  });
  it('refuses an eval set that hashes differently even when its path is not listed', () => {
    const m = parseManifest(`name: h\ndomain: math\neval_set: {path: eval.jsonl, hash: ${HASH}}\n`);
    const v = checkBoundary(m, { files: [], keys: [], opaque: [], manifest: m, evalHash: `sha256:${'b'.repeat(64)}` });
    assert.deepEqual(v.map((x) => x.rule), ['eval_set.hash']);
    const v2 = checkBoundary(m, { files: [{ status: 'M', path: 'eval.jsonl' }], keys: [], opaque: [], manifest: m, evalHash: null });
    assert.deepEqual(v2.map((x) => x.rule), ['eval_set.path']);
  });
  it('freezes the manifest keys that judge every version', () => {
    const v = checkBoundary(parent, changes({ files: [{ status: 'M', path: 'evotrainer.yaml' }], keys: [{ file: 'evotrainer.yaml', key: 'cluster.gpus', before: 8, after: 16 }, { file: 'evotrainer.yaml', key: 'thresholds.x.warning', before: 1, after: 2 }] }));
    assert.deepEqual(v.map((x) => x.path), ['evotrainer.yaml:cluster.gpus']);
  });
});

describe('single factor', () => {
  const cs = changes({
    files: [{ status: 'M', path: 'configs/train.yaml' }],
    keys: [
      { file: 'configs/train.yaml', key: 'algorithm.kl_coef', before: 0.1, after: 0.05 },
      { file: 'configs/train.yaml', key: 'algorithm.entropy_coef', before: 0, after: 0.01 },
    ],
  });
  it('counts each changed config key as a unit', () => {
    assert.deepEqual(factorUnits(cs), ['configs/train.yaml:algorithm.kl_coef', 'configs/train.yaml:algorithm.entropy_coef']);
    assert.equal(checkSingleFactor(cs, null).ok, false);
  });
  it('accepts units inside a declared key prefix and flags the rest', () => {
    assert.equal(checkSingleFactor(cs, 'configs/train.yaml:algorithm').ok, true);
    assert.deepEqual(checkSingleFactor(cs, 'configs/train.yaml:algorithm.kl_coef').outside, ['configs/train.yaml:algorithm.entropy_coef']);
    assert.equal(checkSingleFactor(cs, 'configs/').ok, true);
    assert.equal(checkSingleFactor(cs, 'configs/train.yaml:algo').ok, false, 'key prefixes are whole segments');
  });
  it('treats a new file as one unit', () => {
    assert.equal(checkSingleFactor(changes({ files: [{ status: 'A', path: 'reward/new.py' }] }), null).ok, true);
  });
});

describe('config keys', () => {
  it('flattens nested maps to dotted leaves, lists as one value', () => {
    assert.deepEqual([...flattenKeys({ a: { b: 1, c: [1, 2] }, d: {} })], [['a.b', 1], ['a.c', [1, 2]], ['d', {}]]);
  });
  it('diffs YAML and JSON by key', () => {
    assert.deepEqual(diffConfigText('x.yaml', 'a: {b: 1, c: 2}\n', 'a: {b: 1, c: 3}\ne: true\n').map((k) => [k.key, k.before, k.after]), [['a.c', 2, 3], ['e', null, true]]);
    assert.deepEqual(diffConfigText('x.json', null, '{"k": 1}').map((k) => k.key), ['k']);
  });
});

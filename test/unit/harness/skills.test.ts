import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conflictPathsFromApply, parseSkill, renderSkill, type SkillRecord } from '../../../src/core/harness/skills';
import { slugify } from '../../../src/core/harness/versions';

const record: SkillRecord = {
  id: 'std-group-filter',
  title: 'Drop zero-variance groups',
  category: 'filter_mechanism',
  trigger: 'dead_group_ratio > 0.5',
  expected_outcome: 'dead_group_ratio < 0.3',
  domains: ['swe'],
  shared: false,
  intervention: { layer: 'filter', factor: 'filters/', hypothesis: 'If we drop dead groups…', target_metric: 'dead_group_ratio', success: 'dead_group_ratio < 0.3', parameters: { std_min: 0.01 }, source: { harness: 'swe', domain: 'swe', version: 'v7', branch: 'evo/v7-x', commit: 'a'.repeat(40) } },
  validation: [{ harness: 'swe', domain: 'swe', version: 'v7', commit: 'a'.repeat(40), status: 'promoted', primary_metric: { name: 'pass_rate', value: 0.38, delta: 0.04 }, summary: 'pass_rate 0.38 (+0.04)', recorded_at: '2025-01-01T00:00:00.000Z' }],
  // A patch that itself contains a markdown fence must survive the round trip.
  patch: 'diff --git a/filters/README.md b/filters/README.md\n--- a/filters/README.md\n+++ b/filters/README.md\n@@ -1 +1,3 @@\n-# filters\n+```python\n+x = 1\n+```\n',
  body: '',
};

describe('skill files', () => {
  it('round-trip through markdown with front matter, even with fences inside the patch', () => {
    const text = renderSkill(record);
    assert.match(text, /\n````diff\n/);
    const back = parseSkill(text, 'x.md');
    assert.equal(back.patch, record.patch);
    assert.deepEqual({ ...back, body: '' }, record);
    assert.match(back.body, /^# Drop zero-variance groups/);
  });
  it('names the failing front-matter field', () => {
    assert.throws(() => parseSkill(renderSkill(record).replace('category: filter_mechanism', 'category: magic'), 's.md'), /s\.md: front matter category:/);
    assert.throws(() => parseSkill('# no front matter', 's.md'), /starts with YAML front matter/);
  });
  it('reads conflicting paths out of git apply messages', () => {
    const stderr = ["error: patch failed: reward/score.py:12", "error: reward/score.py: patch does not apply", "error: env/new.py: already exists in index", "Applied patch to 'a b.py' with conflicts.", 'U a b.py'].join('\n');
    assert.deepEqual(conflictPathsFromApply(stderr), ['a b.py', 'env/new.py', 'reward/score.py']);
  });
});

describe('branch slugs', () => {
  it('fold unicode, drop punctuation, cut at a word', () => {
    assert.equal(slugify('If we add an édit-streak penalty (λ=0.01), turns drop'), 'add-an-edit-streak-penalty-0-01-turns', 'cut before the word that passes 40 characters');
    assert.equal(slugify('$();"\''), 'change');
    assert.equal(slugify('a'.repeat(60)).length, 40);
  });
});

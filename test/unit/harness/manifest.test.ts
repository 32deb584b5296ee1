import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkManifest, manifestJsonSchema, ManifestError, parseManifest, pathMatches, withEvalHash } from '../../../src/core/harness/manifest';
import { repoRoot } from '../../helpers/tmp';

const starter = readFileSync(path.join(repoRoot, 'harness-templates', 'starter', 'evotrainer.yaml'), 'utf8');

describe('manifest schema', () => {
  it('accepts the starter template with every section typed', () => {
    const m = parseManifest(starter);
    assert.equal(m.primary_metric, 'pass_rate');
    assert.deepEqual(m.action_boundary?.frozen, ['data/eval.jsonl']);
    assert.deepEqual(m.thresholds?.dead_group_ratio, { warning: 0.3, critical: 0.5 });
  });

  it('puts a wrong type at the value, with line and column', () => {
    const { manifest, problems } = checkManifest('name: x\ndomain: math\nclusters:\n  gpu:\n    kind: kubernetes\n');
    assert.equal(manifest, null);
    assert.deepEqual(problems.map((p) => [p.line, p.column, p.severity]), [[5, 11, 'error']]);
    assert.match(problems[0]!.message, /^clusters\.gpu\.kind: /);
  });

  it('tells a mistyped value from a missing key', () => {
    const [p] = checkManifest('name: x\ndomain: math\ngates:\n  backtest: maybe\n').problems;
    assert.deepEqual([p?.line, p?.column], [4, 13]);
    assert.match(p!.message, /^gates\.backtest: .*expected boolean/);
  });

  it('names a missing nested key at its parent', () => {
    const [p] = checkManifest('name: x\ndomain: math\neval_set:\n  hash: sha256:' + 'a'.repeat(64) + '\n').problems;
    assert.deepEqual([p?.line, p?.column, p?.message], [4, 3, 'Missing required key "eval_set.path".']);
  });

  it('warns about an unknown key where it is, and still yields the manifest', () => {
    const { manifest, problems } = checkManifest('name: x\ndomain: math\nthresholds: {}\nautonmy: manual\n');
    assert.deepEqual(problems.map((p) => [p.severity, p.line, p.column]), [['warning', 4, 1]]);
    assert.match(problems[0]!.message, /Unknown key "autonmy"/);
    assert.equal(manifest?.name, 'x');
  });

  it('fails with file:line:col for each error', () => {
    assert.throws(
      () => parseManifest('name: x\ndomain: math\nautonomy: sometimes\n', 'h/evotrainer.yaml'),
      (e: unknown) => e instanceof ManifestError && /^h\/evotrainer\.yaml:3:11: autonomy: /.test(e.message),
    );
  });

  it('pins the eval hash keeping comments and layout', () => {
    const out = withEvalHash(starter, `sha256:${'b'.repeat(64)}`);
    assert.equal(out.split('\n').length, starter.split('\n').length + 1);
    assert.match(out, /eval_set:\n {2}path: data\/eval\.jsonl\n {2}hash: sha256:b{64}\n/);
    assert.match(out, /^# What an intervention may change/m);
    assert.match(out, /editable: \[reward\/, filters\/, env\/, train\/, diagnostics\/\]/);
  });

  it('exports JSON Schema, and schemas/evotrainer.schema.json is the current export', () => {
    const schema = manifestJsonSchema();
    assert.deepEqual((schema as { required: string[] }).required, ['name', 'domain']);
    assert.equal((schema as { additionalProperties: boolean }).additionalProperties, false);
    const committed = JSON.parse(readFileSync(path.join(repoRoot, 'schemas', 'evotrainer.schema.json'), 'utf8')) as unknown;
    assert.deepEqual(committed, schema, 'regenerate it: node bin/evotrainer.js schema --out schemas/evotrainer.schema.json');
  });

  it('matches boundary paths as files or folders, never by string prefix', () => {
    assert.equal(pathMatches('data/', 'data/eval.jsonl'), true);
    assert.equal(pathMatches('data', 'data/eval.jsonl'), true);
    assert.equal(pathMatches('data', 'database.py'), false);
    assert.equal(pathMatches('data/eval.jsonl', 'data/eval.jsonl'), true);
    assert.equal(pathMatches('./reward/', 'reward/x.py'), true);
  });
});

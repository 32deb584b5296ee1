import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkManifestText } from '../../src/core/harness/manifestSyntax';

describe('manifest syntax check', () => {
  it('accepts a minimal manifest', () => {
    assert.deepEqual(checkManifestText('name: demo\ndomain: math\n'), []);
  });
  it('reports a YAML error at its line and column', () => {
    const problems = checkManifestText('name: demo\ndomain: math\nthresholds:\n  dead_group_ratio: [0.3\n');
    assert.equal(problems[0]?.severity, 'error');
    assert.ok(problems[0]!.line >= 4, `line ${problems[0]!.line}`);
  });
  it('reports duplicate keys where the second one is', () => {
    const [p] = checkManifestText('name: a\ndomain: math\nname: b\n');
    assert.equal(p?.line, 3);
    assert.equal(p?.column, 1);
    assert.match(p!.message, /unique/i);
  });
  it('names each missing required key', () => {
    const problems = checkManifestText('trainer: verl\n');
    assert.deepEqual(problems.map((p) => p.message), ['Missing required key "name".', 'Missing required key "domain".']);
  });
  it('refuses a manifest that is not a mapping', () => {
    assert.match(checkManifestText('- a\n- b\n')[0]!.message, /must be a mapping/);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../helpers/tmp';

// npm's own range matcher (semver, the one npm checks `engines` with), from the installed tree.
const semver = createRequire(path.join(repoRoot, 'package.json'))('semver') as { satisfies(v: string, range: string): boolean; minVersion(range: string): { version: string } };

describe('the stated Node requirement', () => {
  it('the README, package.json engines and every locked package agree on it', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const stated = /with Node (\d+\.\d+) or later/.exec(readme)?.[1];
    assert.ok(stated, 'the README states a Node version');
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
    assert.equal(semver.minVersion(pkg.engines.node).version, `${stated}.0`, 'engines.node starts where the README says');
    const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };
    assert.equal((lock.packages['']!.engines as { node: string }).node, pkg.engines.node, "the lock's copy of the project's engines");
    const needs = Object.entries(lock.packages).flatMap(([name, p]) => (p.engines && !Array.isArray(p.engines) && p.engines.node ? [[name, p.engines.node] as const] : []));
    assert.ok(needs.length > 10);
    for (const v of [`${stated}.0`, '24.0.0']) {
      assert.deepEqual(needs.filter(([, range]) => !semver.satisfies(v, range)).map(([n, r]) => `${n} needs ${r}`), [], `on Node ${v}`);
    }
    // …and the requirement is not stated higher than it is: one minor lower, some package refuses.
    const [major, minor] = stated.split('.').map(Number);
    assert.ok(needs.some(([, range]) => !semver.satisfies(`${major}.${minor! - 1}.0`, range)));
  });
});

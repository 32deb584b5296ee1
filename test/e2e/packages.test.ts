import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkPackage } from '../../scripts/check-packages.mjs';
import { repoRoot, tempDir } from '../helpers/tmp';

/**
 * The platform packages (scripts/package.mjs, `npm run package:all` for the full set,
 * `npm run package:check` to check it). Here: the linux-x64 package the e2e suite
 * installs, and linux-arm64 (Grace-Hopper login nodes) as the cross-platform smoke,
 * its binding fetched from the npm registry.
 */
describe('platform packages', () => {
  const vsix = path.join(repoRoot, 'evotrainer.vsix');

  it('the linux-x64 package holds its own DuckDB binding alone, and DuckDB loads from the unpacked package', () => {
    const c = checkPackage(vsix, 'linux-x64');
    assert.equal(c.binding, 'duckdb.node ELF x64, libduckdb.so ELF x64');
    assert.match(c.loaded ?? '', /^v\d+\.\d+\.\d+/);
    // No dependency tree rides along: the bundles, the binding, the manifest files.
    assert.ok(c.files < 60, `${c.files} files`);
    // A workspace extension: under Remote-SSH it runs on the remote host, beside the engine and the store.
    assert.deepEqual(c.extensionKind, ['workspace']);
    assert.equal(c.icon, 'media/icon.png');
  });

  it('a package is checked against its target: the linux-x64 package is not a linux-arm64 one', () => {
    assert.throws(() => checkPackage(vsix, 'linux-arm64'), /names target linux-x64, not linux-arm64/);
  });

  it('the same script builds linux-arm64 with an aarch64 binding and no other, without a vsce warning', () => {
    const out = path.join(tempDir(), 'evotrainer-linux-arm64.vsix');
    // --no-build: the suite's setup has just made the production build (npm run package).
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/package.mjs'), 'linux-arm64', '--no-build', '--out', out], { cwd: repoRoot, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^linux-arm64\s+\d+\.\d MiB/m);
    const c = checkPackage(out, 'linux-arm64');
    assert.equal(c.binding, 'duckdb.node ELF arm64, libduckdb.so ELF arm64');
    assert.equal(c.loaded, null, 'an arm64 binding cannot load on this x64 machine');
  });
});

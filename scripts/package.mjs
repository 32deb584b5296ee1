// Builds the platform packages: one .vsix per VS Code target, each holding the bundles
// and that platform's DuckDB binding (dist/native/) and no other.
//   node scripts/package.mjs                   this machine's target, as evotrainer.vsix
//   node scripts/package.mjs --all | TARGET…   each as out/evotrainer-<version>-<target>.vsix
// Options: --out FILE (one target), --no-build (package the build already in dist/).
// vsce runs on a staged copy (.cache/package/<target>/), so dist/ keeps this machine's
// binding; a vsce warning fails the run.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hostTarget, stageNative, TARGETS } from './native.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHIPPED = ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', '.vscodeignore', 'media', 'dist'];

function fail(msg) {
  process.stderr.write(`[package] ERROR: ${msg}\n`);
  process.exit(1);
}

/** Packages `target` from dist/ into `out`; returns the package's size in bytes. */
export function packageTarget(target, out) {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const stage = path.join(root, '.cache', 'package', target);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const f of SHIPPED) cpSync(path.join(root, f), path.join(stage, f), { recursive: true, filter: (src) => src !== path.join(root, 'dist', 'native') });
  stageNative(target, path.join(stage, 'dist', 'native'));
  // README images are relative: vsce makes them absolute from a GitHub or GitLab
  // repository; elsewhere they stay relative (the editor shows them from the package).
  const hosted = /github\.com|gitlab\.com/.test(pkg.repository?.url ?? '');
  const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  const args = ['package', '--no-dependencies', '--target', target, '-o', out, ...(hosted ? [] : ['--no-rewrite-relative-links'])];
  const r = spawnSync(process.execPath, [vsce, ...args], { cwd: stage, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  const said = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0) fail(`vsce package --target ${target} failed:\n${said}`);
  const warnings = said.split('\n').filter((l) => /\bWARNING\b/.test(l));
  if (warnings.length) fail(`vsce warned while packaging ${target}:\n${warnings.join('\n')}`);
  rmSync(stage, { recursive: true, force: true });
  return statSync(out).size;
}

function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { all: { type: 'boolean' }, out: { type: 'string' }, 'no-build': { type: 'boolean' } } });
  const many = values.all || positionals.length > 0;
  const targets = values.all ? TARGETS : positionals.length ? positionals : [hostTarget];
  for (const t of targets) if (!TARGETS.includes(t)) fail(`unknown target "${t}"; choose from ${TARGETS.join(', ')}`);
  if (values.out && targets.length !== 1) fail('--out names one package: give one target');
  if (!values['no-build']) {
    const b = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--production', '--clean'], { stdio: 'inherit' });
    if (b.status !== 0) fail('the production build failed');
  }
  const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
  const rows = [];
  for (const t of targets) {
    const out = path.resolve(values.out ?? (many ? path.join(root, 'out', `evotrainer-${version}-${t}.vsix`) : path.join(root, 'evotrainer.vsix')));
    mkdirSync(path.dirname(out), { recursive: true });
    const bytes = packageTarget(t, out);
    rows.push(`${t.padEnd(13)} ${(bytes / 1024 / 1024).toFixed(1).padStart(5)} MiB  ${path.relative(root, out)}`);
    process.stderr.write(`[package] ${rows.at(-1)}\n`);
  }
  console.log(rows.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();

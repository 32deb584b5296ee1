// `npm run demo`: builds EvoTrainer, creates a sample harness workspace, and serves the
// extension in a real VS Code (code-server) on a loopback port. Ctrl-C stops it.
//   --check        start, verify the page answers, stop (for scripts and CI)
//   --port N       preferred port (default 8080, or EVOTRAINER_DEMO_PORT)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { startCodeServer } from './code-server.mjs';
import { ensureE2E } from './e2e-setup.mjs';
import { ensureDeps, root, run } from './ensure-deps.mjs';

const args = process.argv.slice(2);
const check = args.includes('--check');
const portArg = args.indexOf('--port');
const port = Number(portArg !== -1 ? args[portArg + 1] : process.env.EVOTRAINER_DEMO_PORT || 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got "${args[portArg + 1]}"`);
  process.exit(2);
}

ensureDeps();
console.log('== building and packaging the extension');
run('npm', ['run', '--silent', 'package']);
console.log('== preparing the editor runtime (code-server, Node 24; first run takes a few minutes)');
ensureE2E();

const workspace = path.join(root, 'demo-workspace');
const evotrainer = (...a) => run(process.execPath, [path.join(root, 'bin', 'evotrainer.js'), ...a], { cwd: workspace });
if (!existsSync(path.join(workspace, '.git'))) {
  console.log(`== creating the sample harness in ${workspace} (evotrainer init)`);
  run(process.execPath, [path.join(root, 'bin', 'evotrainer.js'), 'init', workspace]);
}
// Real rollouts to look at: the SWE trajectories shipped beside the project, when present.
const swe = path.join(root, '..', 'shared', 'data', 'swe-mini-swe-agent', 'trajs');
if (existsSync(swe) && !existsSync(path.join(workspace, '.evotrainer', 'store.duckdb'))) {
  console.log('== importing the sample SWE trajectories into the harness store');
  evotrainer('import', swe, '--run', 'swe-sample');
}

console.log('== environment');
spawnSync(process.execPath, [path.join(root, 'bin', 'evotrainer.js'), 'doctor'], { stdio: 'inherit' });

const home = path.join(root, '.cache', 'demo');
mkdirSync(home, { recursive: true });
const server = await startCodeServer({ workspace, home, vsix: path.join(root, 'evotrainer.vsix'), port });
console.log(`\nEvoTrainer is running in VS Code at ${server.url}`);
console.log('Open it in a browser, then run "EvoTrainer: Check Environment" or "EvoTrainer: Show Health Report" from the command palette (F1).');

if (check) {
  const res = await fetch(server.url);
  await server.stop();
  if (!res.ok) {
    console.error(`the editor answered ${res.status}`);
    process.exit(1);
  }
  console.log('demo check passed: the editor answered, stopped again.');
} else {
  console.log('Press Ctrl-C to stop.');
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

// `npm run demo`: the co-evolution loop end to end on harnesses that train for real on any
// CPU (python3 alone), then the extension in a real VS Code (code-server) on the result.
//   1. toy-agentic (a multi-turn bug-fixing agent trained by GRPO): `evotrainer evolve`
//      diagnoses, proposes one single-factor version per round from its skills, backtests
//      it, trains it (local executor), evaluates it and lets the gate promote or reject it.
//   2. toy-math (a second domain): the skill validated on toy-agentic is reused there.
//   3. the lineage of both, with every decision and its reasons; the honest score against
//      the baseline with its paired bootstrap interval.
//   --no-ui        stop after the loop (no editor)
//   --fresh        start from new harnesses (default: continue the ones in demo-workspace/)
//   --check        serve the editor, verify the page answers, stop (for scripts and CI)
//   --port N       preferred port (default 8080, or EVOTRAINER_DEMO_PORT)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensureDeps, root, run } from './ensure-deps.mjs';

const args = process.argv.slice(2);
const check = args.includes('--check');
const noUi = args.includes('--no-ui');
const portArg = args.indexOf('--port');
const port = Number(portArg !== -1 ? args[portArg + 1] : process.env.EVOTRAINER_DEMO_PORT || 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got "${args[portArg + 1]}"`);
  process.exit(2);
}

const t0 = Date.now();
ensureDeps();
console.log('== building EvoTrainer');
run('npm', ['run', '--silent', 'build']);

const workspace = path.join(root, 'demo-workspace');
if (args.includes('--fresh')) rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true });
const bin = path.join(root, 'bin', 'evotrainer.js');
const evotrainer = (...a) => run(process.execPath, [bin, ...a], { cwd: workspace });
const capture = (...a) => spawnSync(process.execPath, [bin, ...a], { cwd: workspace, encoding: 'utf8' });

const agentic = path.join(workspace, 'toy-agentic');
const math = path.join(workspace, 'toy-math');
for (const [dir, template] of [
  [agentic, 'toy-agentic'],
  [math, 'toy-math'],
]) {
  if (!existsSync(path.join(dir, '.git'))) evotrainer('init', '--template', template, dir);
}

console.log('\n== 1. evolve toy-agentic (3 rounds, full autonomy, local executor)');
evotrainer('evolve', '--trust', '--rounds', '3', '--autonomy', 'full', '--harness', agentic);

console.log('\n== 2. evolve toy-math, reusing the skills validated on toy-agentic');
evotrainer('evolve', '--trust', '--rounds', '1', '--autonomy', 'full', '--harness', math, '--skills', path.join(agentic, 'skills'));

console.log('\n== 3. what the loop found');
const library = path.join(workspace, 'skill-library');
const shared = capture('skill', 'share', 'zero-variance-filter', '--library', library, '--harness', math);
console.log(shared.status === 0 ? shared.stdout.trim() : `skill not shared: ${shared.stderr.trim()}`);
const lineage = JSON.parse(capture('lineage', '--json', '--harness', agentic).stdout);
const promoted = lineage.promoted?.version;
if (promoted && promoted !== 'v0') {
  const g = capture('gate', promoted, '--against', 'v0', '--no-record', '--json', '--harness', agentic);
  try {
    const c = JSON.parse(g.stdout).comparisons.honest_pass_rate;
    const f = (x) => (x >= 0 ? '+' : '') + x.toFixed(3);
    console.log(`toy-agentic honest score (eval with git history scrubbed), v0 → ${promoted}: ${c.before.toFixed(3)} → ${c.after.toFixed(3)} (Δ ${f(c.delta)}, 95% paired bootstrap CI [${f(c.ci[0])}, ${f(c.ci[1])}] over ${c.n} tasks)${c.withinNoise ? ' — within noise' : ' — beyond the interval'}`);
  } catch {
    console.log(`could not compare ${promoted} with v0: ${g.stderr.trim()}`);
  }
}
console.log(`loop finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

if (noUi) process.exit(0);

const { startCodeServer } = await import('./code-server.mjs');
const { ensureE2E } = await import('./e2e-setup.mjs');
console.log('\n== packaging the extension and preparing the editor runtime (code-server, Node 24; first run takes a few minutes)');
run('npm', ['run', '--silent', 'package']);
ensureE2E();
const home = path.join(root, '.cache', 'demo');
mkdirSync(home, { recursive: true });
const server = await startCodeServer({ workspace: agentic, home, vsix: path.join(root, 'evotrainer.vsix'), port });
console.log(`\nEvoTrainer is running in VS Code at ${server.url}`);
console.log('The Versions view shows the lineage; open a version for its diff and evidence, or run "EvoTrainer: Open Failure Explorer" (F1).');
console.log('"EvoTrainer: Show Training Curves" overlays each version\'s training run (entropy, score, grad norm), the promoted versions starred; a step opens its rollouts.');

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

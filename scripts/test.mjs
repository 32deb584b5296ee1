// `npm test`: static checks, then the unit, integration and e2e suites on node's test
// runner, each with its own counts, then one closing line with the totals.
// In CI (CI=true) a skipped test is a failure: a missing prerequisite must be installed
// by the setup, not skipped past.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { build, ensureDeps, root, run } from './ensure-deps.mjs';
import { gateOnSharedData } from './shared-data.mjs';

const all = ['unit', 'integration', 'e2e'];
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const s of wanted) if (!all.includes(s)) {
  console.error(`unknown suite "${s}"; choose from ${all.join(', ')}`);
  process.exit(2);
}
const suites = wanted.length ? wanted : all;
const ci = process.env.CI === 'true' || process.env.CI === '1';

function testFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.test\.ts$/.test(e.name)) out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

ensureDeps();
build();
console.log('\n== static checks: tsc, eslint');
run('npx', ['tsc', '-p', '.', '--noEmit']);
run('npx', ['eslint', '.', '--max-warnings=0']);

// Compressed dumps are read through the real zstd, bzip2 and xz programs, and the tests
// compress real files with each (and gzip): installed here as root on Debian when missing.
const compressors = { gzip: 'gzip', zstd: 'zstd', bzip2: 'bzip2', xz: 'xz-utils' };
const missingCompressors = Object.entries(compressors).filter(([program]) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0).map(([, pkg]) => pkg);
if (missingCompressors.length) {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    console.error(`missing programs the import tests run: install them (Debian/Ubuntu: \`sudo apt-get install ${missingCompressors.join(' ')}\`), then rerun.`);
    process.exit(1);
  }
  console.log(`\n== installing ${missingCompressors.join(' ')} (apt-get)`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missingCompressors], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

// The integration tests start the real test cluster (sshd, munge, Slurm) when it is not up;
// what this run started, it stops at the end (a cluster already running is left as it was).
const clusterSetup = [path.join(root, 'scripts', 'cluster-setup.mjs')];
const clusterWasUp = spawnSync(process.execPath, [...clusterSetup, '--running'], { encoding: 'utf8' }).status === 0;
function stopClusterWeStarted() {
  if (clusterWasUp) return;
  const up = spawnSync(process.execPath, [...clusterSetup, '--running'], { encoding: 'utf8' });
  if (up.status !== 0) return;
  console.log(`\n== stopping the test cluster this run started: ${up.stdout.trim()}`);
  spawnSync(process.execPath, [...clusterSetup, '--stop'], { stdio: 'inherit' });
}

const totals = { pass: 0, fail: 0, skipped: 0 };
const rows = [];
// Test files reading ../shared/data are not run without it: one failure names the path.
const suiteFiles = Object.fromEntries(suites.map((s) => [s, testFiles(path.join(root, 'test', s))]));
const data = gateOnSharedData(root, suites.flatMap((s) => suiteFiles[s]));
if (data.failure) console.error(`\nFAIL ${data.failure}`);
const outDir = path.join(root, 'test-results');
mkdirSync(outDir, { recursive: true });

for (const suite of suites) {
  if (suite === 'e2e') {
    console.log('\n== e2e setup: chromium, Node 24, code-server; packaging the .vsix');
    run(process.execPath, [path.join(root, 'scripts', 'e2e-setup.mjs')]);
    run('npm', ['run', '--silent', 'package']);
  }
  const files = suiteFiles[suite].filter((f) => data.run.includes(f));
  if (!files.length) {
    console.error(`suite ${suite} has no test files under test/${suite}`);
    process.exit(1);
  }
  console.log(`\n== ${suite}: ${files.length} file(s)`);
  const tap = path.join(outDir, `${suite}.tap`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...files],
    { stdio: 'inherit', cwd: root, env: { ...process.env, EVOTRAINER_TEST_SUITE: suite } },
  );
  const text = existsSync(tap) && statSync(tap).size ? readFileSync(tap, 'utf8') : '';
  const count = (k) => Number(text.match(new RegExp(`^# ${k} (\\d+)$`, 'm'))?.[1] ?? 0);
  const c = { pass: count('pass'), fail: count('fail') + count('cancelled'), skipped: count('skipped') + count('todo') };
  if (r.status !== 0 && c.fail === 0) c.fail = 1; // the runner itself failed (crash, bad flag)
  if (c.pass + c.fail === 0) {
    console.error(`suite ${suite} ran no test`);
    c.fail = 1;
  }
  rows.push(`${suite}: ${c.pass} passed, ${c.fail} failed, ${c.skipped} skipped`);
  for (const k of Object.keys(totals)) totals[k] += c[k];
}

stopClusterWeStarted();
console.log('\n== summary');
for (const row of rows) console.log(row);
let failed = totals.fail;
if (data.failure) {
  console.log(`FAIL ${data.failure}`);
  failed += 1;
}
if (ci && totals.skipped > 0) {
  console.log(`CI: ${totals.skipped} test(s) skipped; in CI every prerequisite must be installed, so a skip counts as a failure.`);
  failed += totals.skipped;
}
console.log(`${totals.pass} passed, ${failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);

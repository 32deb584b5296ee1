// Health benchmark (`npm run bench:health [-- --rollouts N]`): the full health report
// (every built-in metric) over the N-rollout store of the ingest benchmark, printed as a
// ratio to one full-scan count(*) of the same store in the same run. Target (N = 1,000,000):
// under 5 s.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { computeHealth } from '../../src/core/diagnose/health';
import { RolloutStore } from '../../src/core/store/store';
import { arg, args, root } from './common';
import { recordBench, watchLoad } from './results';

const N = Number(arg('rollouts', '1000000'));
const work = path.resolve(arg('dir', path.join(root, '.cache', 'bench')));
const storeFile = path.join(work, `import-${N}.duckdb`);

async function main() {
  const load = watchLoad();
  if (!existsSync(storeFile)) {
    console.log(`no ${N}-rollout store yet: building it with the ingest benchmark…`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'ingest.ts'), '--rollouts', String(N), '--dir', work], { stdio: 'inherit', cwd: root });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  const store = await RolloutStore.open(storeFile);
  let t = performance.now();
  const n = (await store.one<{ n: number }>('select count(*) as n from rollouts'))!.n;
  const countMs = performance.now() - t;
  t = performance.now();
  const h = await computeHealth(store);
  const healthMs = performance.now() - t;
  store.close();
  console.log(`store: ${n.toLocaleString('en')} rollouts, ${h.groups.toLocaleString('en')} groups`);
  console.log(`count(*) full scan (baseline)   ${countMs.toFixed(0)} ms`);
  console.log(`health report, ${h.metrics.length} metrics       ${healthMs.toFixed(0)} ms   ${(healthMs / countMs).toFixed(1)}× the count(*) (target < 5000 ms)`);
  console.log(`alerts: ${h.alerts.map((a) => `${a.name} ${a.status}`).join(', ') || 'none'}`);
  if (args.includes('--json')) console.log(JSON.stringify({ rollouts: n, countMs, healthMs, ratio: healthMs / countMs, metrics: h.metrics.length }));
  recordBench('health', 'npm run bench:health', N === 1_000_000, load.stop(), [
    { figure: `health report (${h.metrics.length} metrics) over ${n.toLocaleString('en')} rollouts`, ours: `${healthMs.toFixed(0)} ms`, baseline: `count(*) full scan ${countMs.toFixed(0)} ms`, ratio: `${(healthMs / countMs).toFixed(1)}× the time`, target: '< 5000 ms', met: healthMs < 5000 },
  ]);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

// `npm run bench:backtest`: a reward backtest over 100,000 cached rollouts with a trivial
// reward function, against the baseline of calling the same function in a plain Python
// loop over the same data (read from a JSON-lines export, in one process).
// Target: end to end (store read + worker start-up + scoring) ≥ 0.5× the plain loop.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { scoreFromStore, WorkerPool } from '../../src/core/backtest';
import { RolloutStore } from '../../src/core/store/store';
import { arg, args } from './common';
import { recordBench, watchLoad } from './results';

const N = Number(arg('rollouts', '100000'));
const load = watchLoad();
const json = args.includes('--json');
const dir = mkdtempSync(path.join(tmpdir(), 'evotrainer-bench-backtest-'));
const log = (s: string) => void (json ? process.stderr : process.stdout).write(s + '\n');

const REWARD = `def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0 if solution_str.strip().endswith(ground_truth) else 0.0
`;

async function main() {
  // verl dumps: 8 samples per prompt, a few hundred characters per response.
  const dump = path.join(dir, 'run', 'rollout_data');
  mkdirSync(dump, { recursive: true });
  const out = createWriteStream(path.join(dump, '1.jsonl'));
  for (let i = 0; i < N; i++) {
    const p = Math.floor(i / 8);
    const answer = String(p % 97);
    const body = `Let me think step by step about problem ${p}. `.repeat(6) + `The answer is ${i % 3 === 0 ? answer : String((p + 1) % 97)}`;
    out.write(JSON.stringify({ input: `Problem ${p}: compute something`, output: body, gts: answer, score: i % 3 === 0 ? 1 : 0, step: 1, data_source: 'bench' }) + '\n');
  }
  await new Promise<void>((r) => out.end(r));
  const tree = path.join(dir, 'tree');
  mkdirSync(path.join(tree, 'reward'), { recursive: true });
  writeFileSync(path.join(tree, 'reward', 'compute_score.py'), REWARD);

  const store = await RolloutStore.open(path.join(dir, 'store.duckdb'));
  await store.import([path.join(dir, 'run')], { run: 'bench' });
  log(`${N} cached rollouts in the store`);

  // Ours, end to end: the workers start (one long-lived python3 per core, as a local backtest
  // starts them) while the reward's inputs are read from the store; the inputs stream to the
  // workers as they are read, only the columns the reward reads (it never reads extra_info).
  const reward = { name: 'r', path: 'reward/compute_score.py', function: 'compute_score', kind: 'verl' as const };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let tStarted = 0;
  let tRead = 0;
  const poolP = WorkerPool.start({ root: tree, workers: availableParallelism(), timeoutSeconds: 10, batchSize: 1024, memoryMb: 4096, functions: [reward] }).then((p) => ((tStarted = performance.now()), p));
  const byId = await scoreFromStore(store, {}, poolP, reward, { onReadDone: () => (tRead = performance.now()) });
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const nodeCpuS = (cpu.user + cpu.system) / 1e6;
  const pool = await poolP;
  await pool.close();
  const rows = await store.all<{ id: number; response: string; ground_truth: string; data_source: string }>('select id, response, ground_truth, data_source from rollouts order by id');
  store.close();
  const items = rows.map((r) => ({ data_source: r.data_source, solution_str: r.response, ground_truth: r.ground_truth, extra_info: { index: r.id } }));
  const results = rows.map((r) => byId.get(r.id) ?? { value: null, error: 'no result' });
  const correct = results.filter((r) => r.value === 1).length;
  const errors = results.filter((r) => r.error !== null).length;
  const oursS = (t2 - t0) / 1000;
  const startS = (tStarted - t0) / 1000;
  const readS = (tRead - t0) / 1000;
  const e2eRate = N / oursS;

  // Baseline: the same function over the same data in one plain Python loop.
  const exportFile = path.join(dir, 'items.jsonl');
  writeFileSync(exportFile, items.map((x) => JSON.stringify(x)).join('\n') + '\n');
  const py = `
import json, sys, time, importlib.util
spec = importlib.util.spec_from_file_location("r", sys.argv[2]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
t = time.perf_counter()
n = c = 0
with open(sys.argv[1]) as f:
    for line in f:
        it = json.loads(line)
        c += m.compute_score(it["data_source"], it["solution_str"], it["ground_truth"], it["extra_info"]) == 1.0
        n += 1
t_all = time.perf_counter() - t
print(json.dumps({"n": n, "correct": c, "seconds": t_all}))
`;
  const b = spawnSync('python3', ['-c', py, exportFile, path.join(tree, 'reward', 'compute_score.py')], { encoding: 'utf8' });
  if (b.status !== 0) throw new Error(b.stderr);
  const base = JSON.parse(b.stdout) as { n: number; correct: number; seconds: number };
  if (base.correct !== correct) throw new Error(`results differ: ${correct} vs the plain loop's ${base.correct}`);
  const baseRate = base.n / base.seconds;
  const ratio = e2eRate / baseRate;
  log(`ours, end to end: ${N} rollouts read from the store and scored by ${availableParallelism()} python3 workers in ${oursS.toFixed(2)} s = ${Math.round(e2eRate)} rollouts/s, ${errors} errors (reading started at 0 and ended at ${readS.toFixed(2)} s; the workers were ready at ${startS.toFixed(2)} s and done at ${oursS.toFixed(2)} s; this process's CPU ${nodeCpuS.toFixed(2)} s)`);
  log(`baseline, the same function in a plain Python loop in one process (json.loads + call per rollout): ${base.seconds.toFixed(2)} s = ${Math.round(baseRate)} rollouts/s`);
  log(`end to end (store read + worker start-up + scoring) ${ratio.toFixed(2)}× the plain loop (target ≥ 0.50)`);
  if (json) process.stdout.write(JSON.stringify({ rollouts: N, seconds: oursS, startSeconds: startS, readSeconds: readS, nodeCpuSeconds: nodeCpuS, e2eRate, baseRate, ratio, errors }) + '\n');
  recordBench('backtest', 'npm run bench:backtest', N === 100000, load.stop(), [
    { figure: `reward backtest of ${N.toLocaleString('en')} cached rollouts, end to end (store read + worker start-up + scoring)`, ours: `${oursS.toFixed(2)} s (${Math.round(e2eRate).toLocaleString('en')}/s)`, baseline: `plain Python loop ${base.seconds.toFixed(2)} s`, ratio: `${ratio.toFixed(2)}× throughput`, target: '≥ 0.50×', met: ratio >= 0.5 },
  ]);
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  rmSync(dir, { recursive: true, force: true });
  console.error(e);
  process.exit(1);
});

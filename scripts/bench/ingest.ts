// Ingest benchmark (`npm run bench:ingest [-- --rollouts N]`): every figure is a ratio
// against a baseline measured in the same run, on the same files.
//   1. N verl rollouts (≈2 KB prompts, ≈4 KB responses, groups of 8, 200 steps):
//      `evotrainer import` vs DuckDB's own read_json of the same files into a table.
//      Target: throughput ≥ 0.8× the baseline; peak RSS ≤ 1 GB.
//   2. The 303 real SWE trajectories, steps included, vs a plain JSON.parse of the files.
//      Target: ≤ 2× the parse time.
//   3. From the N-rollout store: one rollout with its steps (p95 < 20 ms) and a filtered,
//      sorted page of 100 rows (p95 < 50 ms).
// Each phase runs in its own process so peak RSS is its own. Beside each wall-clock time it
// prints the phase's CPU time (all threads) and the machine's 1-minute load average at its
// start and end: on a shared machine the load says how far the wall-clock ratios can be read.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { loadDuckDB } from '../../src/core/store/duckdb';
import { RolloutStore } from '../../src/core/store/store';
import { arg, args, root } from './common';
import { recordBench, watchLoad, type Figure } from './results';

const N = Number(arg('rollouts', '1000000'));
const machineLoad = watchLoad();
const STEPS = Math.min(200, Math.max(1, Math.floor(N / 64)));
const GROUP = 8;
const PROMPT_BYTES = 2048;
const RESPONSE_BYTES = 4096;
const work = path.resolve(arg('dir', path.join(root, '.cache', 'bench')));
const dumpDir = path.join(work, `verl-${N}`, 'rollout_data');
const sweTrajs = path.resolve(root, '..', 'shared', 'data', 'swe-mini-swe-agent', 'trajs');

function words(n: number, seed: number): string {
  // Varied text so neither side benefits from trivially compressible input.
  const vocab = ['the', 'answer', 'is', 'therefore', 'we', 'compute', 'sum', 'of', 'x', 'y', 'step', 'check', 'boxed', 'so', 'then', 'value', '<b>', '"q"', '\\n', 'é'];
  let s = '';
  let k = seed;
  while (s.length < n) {
    k = (k * 1103515245 + 12345) & 0x7fffffff;
    s += vocab[k % vocab.length] + (k % 7 === 0 ? '\n' : ' ');
  }
  return s.slice(0, n);
}

function generate(): void {
  const stamp = path.join(dumpDir, '.complete');
  if (existsSync(stamp)) return;
  rmSync(dumpDir, { recursive: true, force: true });
  mkdirSync(dumpDir, { recursive: true });
  const perStep = Math.ceil(N / STEPS);
  let written = 0;
  for (let step = 1; step <= STEPS && written < N; step++) {
    const fd = openSync(path.join(dumpDir, `${step}.jsonl`), 'w');
    let buf: string[] = [];
    for (let i = 0; i < perStep && written < N; i++, written++) {
      const g = Math.floor(i / GROUP);
      const correct = (written * 2654435761) % 3 === 0;
      buf.push(JSON.stringify({
        input: `<|im_start|>user\nProblem ${step}-${g}: ${words(PROMPT_BYTES, step * 7919 + g)}<|im_end|>\n<|im_start|>assistant\n`,
        output: words(RESPONSE_BYTES, written),
        gts: String(g),
        score: correct ? 1.0 : 0.0,
        step,
        acc: correct,
        pred: correct ? String(g) : String(g + 1),
        format_reward: 1.0,
      }));
      if (buf.length === 500) {
        writeSync(fd, buf.join('\n') + '\n');
        buf = [];
      }
    }
    if (buf.length) writeSync(fd, buf.join('\n') + '\n');
    closeSync(fd);
  }
  writeFileSync(stamp, String(N));
}

function dirBytes(dir: string): number {
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).reduce((a, f) => a + statSync(path.join(dir, f)).size, 0);
}

/** CPU time of this process (every thread) since `from`, in ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(from);
  return (c.user + c.system) / 1000;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

interface PhaseResult {
  ms: number;
  /** CPU time of the phase's process, every thread, in ms. */
  cpuMs: number;
  maxRssMb: number;
  /** The 1-minute load average when the phase started and when it ended. */
  load: [number, number];
  [k: string]: unknown;
}

/** Runs a phase in a child process; asynchronously, so that the load is sampled meanwhile (see watchLoad). */
async function runPhase(phase: string): Promise<PhaseResult> {
  const before = loadavg()[0]!;
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, ...args, '--phase', phase], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (status !== 0) throw new Error(`phase ${phase} failed:\n${stdout}\n${stderr}`);
  const line = stdout.trim().split('\n').pop()!;
  return { ...(JSON.parse(line) as PhaseResult), load: [before, loadavg()[0]!] };
}

async function phase(name: string): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const db = path.join(work, `${name}-${N}.duckdb`);
  if (name === 'baseline' || name === 'import') for (const f of [db, `${db}.wal`]) rmSync(f, { force: true });
  if (name === 'baseline') {
    const { DuckDBInstance } = loadDuckDB();
    const inst = await DuckDBInstance.create(db, { memory_limit: '1GB', threads: '2' });
    const conn = await inst.connect();
    await conn.run(`create table rollouts as select * from read_json('${dumpDir.replace(/'/g, "''")}/*.jsonl', format = 'newline_delimited')`);
    const n = Number((await conn.runAndReadAll('select count(*) from rollouts')).getRows()[0]![0]);
    conn.closeSync();
    inst.closeSync();
    return { ms: performance.now() - t0, rows: n };
  }
  if (name === 'import') {
    const store = await RolloutStore.open(db);
    const s = await store.import([dumpDir], { run: 'bench' });
    store.close();
    return { ms: performance.now() - t0, rows: s.rollouts };
  }
  if (name === 'queries') {
    const store = await RolloutStore.open(path.join(work, `import-${N}.duckdb`));
    const max = (await store.one<{ n: number }>('select max(id) n from rollouts'))!.n;
    let seed = 42;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % m;
    };
    await store.getRollout(1); // warm-up
    const one: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const r = await store.getRollout(1 + rnd(max));
      one.push(performance.now() - t);
      if (!r) throw new Error('missing rollout');
    }
    const page: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      const pages = Math.max(1, Math.floor((N / STEPS) * 0.6 / 100));
      const rows = await store.listRollouts({ step: 1 + rnd(STEPS), correct: false, sort: '-reward', limit: 100, offset: rnd(pages) * 100 });
      page.push(performance.now() - t);
      if (!rows.length) throw new Error('empty page');
    }
    store.close();
    return { ms: performance.now() - t0, oneP95: pct(one, 95), oneP50: pct(one, 50), pageP95: pct(page, 95), pageP50: pct(page, 50) };
  }
  if (name === 'swe-parse' || name === 'swe-import') {
    const files = readdirSync(sweTrajs).map((f) => path.join(sweTrajs, f));
    const times: number[] = [];
    const cpu: number[] = [];
    for (let rep = 0; rep < 3; rep++) {
      if (name === 'swe-parse') {
        const t = performance.now();
        const c = process.cpuUsage();
        for (const f of files) JSON.parse(readFileSync(f, 'utf8'));
        cpu.push(cpuMs(c));
        times.push(performance.now() - t);
      } else {
        // Timed: the import alone (discovery, hashing, parsing, steps, writing), not opening the store.
        const store = await RolloutStore.open(':memory:');
        const t = performance.now();
        const c = process.cpuUsage();
        const s = await store.import([sweTrajs], { run: 'swe' });
        cpu.push(cpuMs(c));
        times.push(performance.now() - t);
        store.close();
        if (s.rollouts !== 303) throw new Error(`imported ${s.rollouts} of 303`);
      }
    }
    return { ms: Math.min(...times), cpuMs: Math.min(...cpu) };
  }
  throw new Error(`unknown phase ${name}`);
}

async function main() {
  const p = args.indexOf('--phase');
  if (p !== -1) {
    const result = await phase(args[p + 1]!);
    const usage = process.resourceUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, ...result, maxRssMb: usage.maxRSS / 1024 })}\n`);
    return;
  }
  mkdirSync(work, { recursive: true });
  const tg = performance.now();
  generate();
  const bytes = dirBytes(dumpDir);
  console.log(`verl dump: ${N.toLocaleString('en')} rollouts, ${STEPS} steps, groups of ${GROUP}, ${(bytes / 1e9).toFixed(2)} GB (ready in ${((performance.now() - tg) / 1000).toFixed(1)} s)`);
  const base = await runPhase('baseline');
  const ours = await runPhase('import');
  const q = await runPhase('queries');
  const sweParse = existsSync(sweTrajs) ? await runPhase('swe-parse') : null;
  const sweImport = sweParse ? await runPhase('swe-import') : null;
  if (base.rows !== ours.rows || ours.rows !== N) throw new Error(`row counts differ: baseline ${String(base.rows)}, import ${String(ours.rows)}, generated ${N}`);
  const ingestRatio = base.ms / ours.ms;
  const sweRatio = sweParse && sweImport ? sweImport.ms / sweParse.ms : null;
  const cpu = (r: PhaseResult) => `CPU ${(r.cpuMs / 1000).toFixed(1)} s`;
  const load = (r: PhaseResult) => `load ${r.load[0].toFixed(1)}→${r.load[1].toFixed(1)}`;
  const rows = [
    ['verl ingest: DuckDB read_json (baseline)', `${(base.ms / 1000).toFixed(1)} s`, `${((bytes / 1e6) / (base.ms / 1000)).toFixed(0)} MB/s`, '', `${cpu(base)}, ${load(base)}`],
    ['verl ingest: evotrainer import', `${(ours.ms / 1000).toFixed(1)} s`, `${((bytes / 1e6) / (ours.ms / 1000)).toFixed(0)} MB/s`, `throughput ${ingestRatio.toFixed(2)}× baseline (target ≥ 0.80)`, `${cpu(ours)} (${(base.cpuMs / ours.cpuMs).toFixed(2)}× the baseline's), ${load(ours)}`],
    ['import peak RSS', `${ours.maxRssMb.toFixed(0)} MB`, '', 'target ≤ 1024 MB', `baseline ${base.maxRssMb.toFixed(0)} MB`],
    ['one rollout + steps', `p95 ${q.oneP95!.toString().slice(0, 5)} ms`, `p50 ${String(q.oneP50).slice(0, 5)} ms`, 'target p95 < 20 ms', load(q)],
    ['filtered sorted page of 100', `p95 ${String(q.pageP95).slice(0, 5)} ms`, `p50 ${String(q.pageP50).slice(0, 5)} ms`, 'target p95 < 50 ms', ''],
  ];
  if (sweParse && sweImport) {
    rows.push(['303 SWE trajectories with steps', `${sweImport.ms.toFixed(0)} ms`, `JSON.parse ${sweParse.ms.toFixed(0)} ms`, `${sweRatio!.toFixed(2)}× the parse (target ≤ 2.00)`, `CPU ${sweImport.cpuMs.toFixed(0)} vs ${sweParse.cpuMs.toFixed(0)} ms (${(sweImport.cpuMs / sweParse.cpuMs).toFixed(2)}×), ${load(sweImport)}`]);
  }
  for (const r of rows) console.log(`${r[0]!.padEnd(42)} ${r[1]!.padEnd(14)} ${r[2]!.padEnd(16)} ${r[3]!.padEnd(44)} ${r[4]}`);
  const result = {
    rollouts: N,
    bytes,
    ingestRatio,
    ingestCpuRatio: base.cpuMs / ours.cpuMs,
    importPeakRssMb: ours.maxRssMb,
    oneP95Ms: q.oneP95,
    pageP95Ms: q.pageP95,
    sweRatio,
    load: { baseline: base.load, import: ours.load },
  };
  const targets = { ingestRatio: ingestRatio >= 0.8, rss: ours.maxRssMb <= 1024, one: (q.oneP95 as number) < 20, page: (q.pageP95 as number) < 50, swe: sweRatio === null || sweRatio <= 2 };
  console.log(`targets: ${Object.entries(targets).map(([k, v]) => `${k} ${v ? 'met' : 'MISSED'}`).join(', ')}`);
  if (args.includes('--json')) console.log(JSON.stringify({ ...result, targets }));
  const mbps = (r: PhaseResult) => `${((bytes / 1e6) / (r.ms / 1000)).toFixed(0)} MB/s`;
  const figures: Figure[] = [
    { figure: `verl ingest, ${N.toLocaleString('en')} rollouts (${(bytes / 1e9).toFixed(2)} GB)`, ours: `${(ours.ms / 1000).toFixed(1)} s, ${mbps(ours)}; ${cpu(ours)}; ${load(ours)}`, baseline: `DuckDB read_json ${(base.ms / 1000).toFixed(1)} s, ${mbps(base)}; ${cpu(base)}; ${load(base)}`, ratio: `${ingestRatio.toFixed(2)}× throughput (CPU ${(base.cpuMs / ours.cpuMs).toFixed(2)}×)`, target: '≥ 0.80×', met: targets.ingestRatio },
    { figure: 'import peak RSS', ours: `${ours.maxRssMb.toFixed(0)} MB`, baseline: `read_json ${base.maxRssMb.toFixed(0)} MB`, target: '≤ 1024 MB', met: targets.rss },
    { figure: 'one rollout + steps', ours: `p95 ${(q.oneP95 as number).toFixed(1)} ms, p50 ${(q.oneP50 as number).toFixed(1)} ms; ${load(q)}`, target: 'p95 < 20 ms', met: targets.one },
    { figure: 'filtered sorted page of 100', ours: `p95 ${(q.pageP95 as number).toFixed(1)} ms, p50 ${(q.pageP50 as number).toFixed(1)} ms`, target: 'p95 < 50 ms', met: targets.page },
  ];
  if (sweParse && sweImport) {
    figures.push({ figure: '303 SWE trajectories with steps', ours: `${sweImport.ms.toFixed(0)} ms; CPU ${sweImport.cpuMs.toFixed(0)} ms; ${load(sweImport)}`, baseline: `JSON.parse ${sweParse.ms.toFixed(0)} ms; CPU ${sweParse.cpuMs.toFixed(0)} ms`, ratio: `${sweRatio!.toFixed(2)}× (CPU ${(sweImport.cpuMs / sweParse.cpuMs).toFixed(2)}×)`, target: '≤ 2.00×', met: targets.swe });
  }
  recordBench('ingest', 'npm run bench:ingest', N === 1_000_000, machineLoad.stop(), figures);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

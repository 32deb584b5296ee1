// Ingest benchmark (`npm run bench:ingest [-- --rollouts N] [--format verl|prime-rl]`): every
// figure is a ratio against a baseline measured in the same run, on the same files.
//   1. N rollouts (≈2 KB prompts, ≈4 KB responses, groups of 8, 200 steps) of the format
//      (verl by default; prime-rl: orchestrator traces shaped like the real vf-eval / prime-rl
//      records, chat messages, metrics, timing, token usage, a few errored rollouts):
//      `evotrainer import` vs DuckDB's own read_json of the same files into a table.
//      Target: throughput ≥ 0.8× the baseline; peak RSS ≤ 1 GB.
//      With --format prime-rl, only this phase runs (its figures go to bench-results/ingest-prime-rl.json).
//   2. The 303 real SWE trajectories, steps included, vs a plain JSON.parse of the files.
//      Target: ≤ 2× the parse time. `--swe` runs this phase alone (printed, not recorded).
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
const FORMATS = ['verl', 'prime-rl'] as const;
const FORMAT = arg('format', 'verl') as (typeof FORMATS)[number];
if (!FORMATS.includes(FORMAT)) {
  console.error(`--format ${FORMAT}: the ingest benchmark generates ${FORMATS.join(' or ')}`);
  process.exit(2);
}
const machineLoad = watchLoad();
const STEPS = Math.min(200, Math.max(1, Math.floor(N / 64)));
const GROUP = 8;
const PROMPT_BYTES = 2048;
const RESPONSE_BYTES = 4096;
const work = path.resolve(arg('dir', path.join(root, '.cache', 'bench')));
/** What `evotrainer import` is given, and the glob read_json reads. */
const dumpDir = FORMAT === 'verl' ? path.join(work, `verl-${N}`, 'rollout_data') : path.join(work, `prime-rl-${N}`);
const dumpGlob = FORMAT === 'verl' ? `${dumpDir}/*.jsonl` : `${dumpDir}/rollouts/*/train/all/traces.jsonl`;
/** The bench's stores: verl's keep their names; other formats' are named after the format. */
const dbPrefix = FORMAT === 'verl' ? '' : `${FORMAT}-`;
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

/** One orchestrator line as prime-rl writes it (Python's json.dumps: `, ` and `: `, `1.0`, bare NaN). */
function primeRlLine(step: number, i: number, written: number): string {
  const g = Math.floor(i / GROUP);
  const example = step * 1000 + g;
  const correct = (written * 2654435761) % 3 === 0;
  const errored = written % 200 === 199; // a sandbox or server error: no completion, NaN reward
  const py = (x: number) => (Number.isInteger(x) ? `${x}.0` : String(x));
  const start = 1767225600 + written * 0.37;
  const gen = 700 + (written % 900);
  const fields: [string, string][] = [
    ['example_id', String(example)],
    ['task', '"gsm8k"'],
    ['prompt', `[{"role": "system", "content": "Think step by step inside <think>...</think> tags, then give your final answer inside \\boxed{}."}, {"role": "user", "content": ${JSON.stringify(`Problem ${step}-${g}: ${words(PROMPT_BYTES, step * 7919 + g)}`)}}]`],
    ['completion', errored ? 'null' : `[{"role": "assistant", "content": ${JSON.stringify(words(RESPONSE_BYTES, written))}}]`],
    ['reward', errored ? 'NaN' : correct ? '1.0' : '0.0'],
    ['timing', `{"start_time": ${py(start)}, "generation_ms": ${py(gen)}, "scoring_ms": ${py(errored ? 0 : 2.5)}, "total_ms": ${py(gen + (errored ? 0 : 2.5))}}`],
    ['is_completed', errored ? 'false' : 'true'],
    ['is_truncated', 'false'],
    ['metrics', `{"correct_answer": ${errored ? 'NaN' : correct ? '1.0' : '0.0'}, "format_reward": ${errored ? 'NaN' : '1.0'}}`],
    ['answer', JSON.stringify(String(g))],
    ['info', '{}'],
    ['error', errored ? '{"error": "SandboxError", "error_chain_repr": "SandboxError(\'sandbox timed out after 30s\')", "error_chain_str": "SandboxError: sandbox timed out after 30s"}' : 'null'],
    ['stop_condition', errored ? '"has_error"' : '"completed"'],
    ['token_usage', `{"input_tokens": ${py(Math.round(PROMPT_BYTES / 4))}, "output_tokens": ${py(errored ? 0 : Math.round(RESPONSE_BYTES / 4))}}`],
    ['kind', '"train"'],
    ['env_name', '"gsm8k"'],
    ['group_id', `"${step.toString(16).padStart(8, '0')}-${g.toString(16).padStart(4, '0')}-4e5f-9a0b-1c2d3e4f5a6b"`],
    ['policy_version', String(Math.max(0, step - 1))],
    ['advantage', errored ? '0.0' : correct ? '0.6667' : '-0.3333'],
  ];
  return `{${fields.map(([k, v]) => `"${k}": ${v}`).join(', ')}}`;
}

function verlLine(step: number, i: number, written: number): string {
  const g = Math.floor(i / GROUP);
  const correct = (written * 2654435761) % 3 === 0;
  return JSON.stringify({
    input: `<|im_start|>user\nProblem ${step}-${g}: ${words(PROMPT_BYTES, step * 7919 + g)}<|im_end|>\n<|im_start|>assistant\n`,
    output: words(RESPONSE_BYTES, written),
    gts: String(g),
    score: correct ? 1.0 : 0.0,
    step,
    acc: correct,
    pred: correct ? String(g) : String(g + 1),
    format_reward: 1.0,
  });
}

/** Where step `step`'s rollouts go: verl's `{step}.jsonl`, prime-rl's `rollouts/step_{step}/train/all/traces.jsonl`. */
function stepFile(step: number): string {
  if (FORMAT === 'verl') return path.join(dumpDir, `${step}.jsonl`);
  const dir = path.join(dumpDir, 'rollouts', `step_${step}`, 'train', 'all');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, 'traces.jsonl');
}

function generate(): void {
  const stamp = path.join(dumpDir, '.complete');
  if (existsSync(stamp)) return;
  rmSync(dumpDir, { recursive: true, force: true });
  mkdirSync(dumpDir, { recursive: true });
  const perStep = Math.ceil(N / STEPS);
  const line = FORMAT === 'verl' ? verlLine : primeRlLine;
  let written = 0;
  for (let step = 1; step <= STEPS && written < N; step++) {
    const fd = openSync(stepFile(step), 'w');
    let buf: string[] = [];
    for (let i = 0; i < perStep && written < N; i++, written++) {
      buf.push(line(step, i, written));
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

/** Bytes of the .jsonl files under `dir`. */
function dirBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl')).reduce((a, f) => a + statSync(path.join(dir, f)).size, 0);
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
  const db = path.join(work, `${dbPrefix}${name}-${N}.duckdb`);
  if (name === 'baseline' || name === 'import') for (const f of [db, `${db}.wal`]) rmSync(f, { force: true });
  if (name === 'baseline') {
    const { DuckDBInstance } = loadDuckDB();
    const inst = await DuckDBInstance.create(db, { memory_limit: '1GB', threads: '2' });
    const conn = await inst.connect();
    await conn.run(`create table rollouts as select * from read_json('${dumpGlob.replace(/'/g, "''")}', format = 'newline_delimited')`);
    const n = Number((await conn.runAndReadAll('select count(*) from rollouts')).getRows()[0]![0]);
    conn.closeSync();
    inst.closeSync();
    return { ms: performance.now() - t0, rows: n };
  }
  if (name === 'import') {
    const store = await RolloutStore.open(db);
    const s = await store.import([dumpDir], { run: 'bench' });
    store.close();
    return { ms: performance.now() - t0, rows: s.rollouts, files: s.files.length, duckdbFiles: s.files.filter((f) => f.reader === 'duckdb').length };
  }
  if (name === 'queries') {
    const store = await RolloutStore.open(path.join(work, `${dbPrefix}import-${N}.duckdb`));
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
  if (args.includes('--swe')) {
    // The SWE phases alone (seconds, not the 1M-rollout run): printed, not recorded (the table's row comes from a full run).
    const parse = await runPhase('swe-parse');
    const imported = await runPhase('swe-import');
    const ratio = imported.ms / parse.ms;
    console.log(`303 SWE trajectories with steps: ${imported.ms.toFixed(0)} ms vs JSON.parse ${parse.ms.toFixed(0)} ms = ${ratio.toFixed(2)}× (target ≤ 2.00, ${ratio <= 2 ? 'met' : 'MISSED'}); CPU ${imported.cpuMs.toFixed(0)} vs ${parse.cpuMs.toFixed(0)} ms (${(imported.cpuMs / parse.cpuMs).toFixed(2)}×); load ${imported.load[0].toFixed(1)}→${imported.load[1].toFixed(1)}`);
    return;
  }
  mkdirSync(work, { recursive: true });
  const tg = performance.now();
  generate();
  const bytes = dirBytes(dumpDir);
  console.log(`${FORMAT} dump: ${N.toLocaleString('en')} rollouts, ${STEPS} steps, groups of ${GROUP}, ${(bytes / 1e9).toFixed(2)} GB (ready in ${((performance.now() - tg) / 1000).toFixed(1)} s)`);
  const base = await runPhase('baseline');
  const ours = await runPhase('import');
  // The store's queries and the SWE trajectories do not depend on the format: measured with verl.
  const q = FORMAT === 'verl' ? await runPhase('queries') : null;
  const sweParse = FORMAT === 'verl' && existsSync(sweTrajs) ? await runPhase('swe-parse') : null;
  const sweImport = sweParse ? await runPhase('swe-import') : null;
  if (base.rows !== ours.rows || ours.rows !== N) throw new Error(`row counts differ: baseline ${String(base.rows)}, import ${String(ours.rows)}, generated ${N}`);
  const ingestRatio = base.ms / ours.ms;
  const sweRatio = sweParse && sweImport ? sweImport.ms / sweParse.ms : null;
  const cpu = (r: PhaseResult) => `CPU ${(r.cpuMs / 1000).toFixed(1)} s`;
  const load = (r: PhaseResult) => `load ${r.load[0].toFixed(1)}→${r.load[1].toFixed(1)}`;
  const readBy = `${String(ours.duckdbFiles)} of ${String(ours.files)} files read by DuckDB`;
  const rows = [
    [`${FORMAT} ingest: DuckDB read_json (baseline)`, `${(base.ms / 1000).toFixed(1)} s`, `${((bytes / 1e6) / (base.ms / 1000)).toFixed(0)} MB/s`, '', `${cpu(base)}, ${load(base)}`],
    [`${FORMAT} ingest: evotrainer import`, `${(ours.ms / 1000).toFixed(1)} s`, `${((bytes / 1e6) / (ours.ms / 1000)).toFixed(0)} MB/s`, `throughput ${ingestRatio.toFixed(2)}× baseline (target ≥ 0.80)`, `${cpu(ours)} (${(base.cpuMs / ours.cpuMs).toFixed(2)}× the baseline's), ${load(ours)}; ${readBy}`],
    ['import peak RSS', `${ours.maxRssMb.toFixed(0)} MB`, '', 'target ≤ 1024 MB', `baseline ${base.maxRssMb.toFixed(0)} MB`],
  ];
  if (q) {
    rows.push(['one rollout + steps', `p95 ${q.oneP95!.toString().slice(0, 5)} ms`, `p50 ${String(q.oneP50).slice(0, 5)} ms`, 'target p95 < 20 ms', load(q)]);
    rows.push(['filtered sorted page of 100', `p95 ${String(q.pageP95).slice(0, 5)} ms`, `p50 ${String(q.pageP50).slice(0, 5)} ms`, 'target p95 < 50 ms', '']);
  }
  if (sweParse && sweImport) {
    rows.push(['303 SWE trajectories with steps', `${sweImport.ms.toFixed(0)} ms`, `JSON.parse ${sweParse.ms.toFixed(0)} ms`, `${sweRatio!.toFixed(2)}× the parse (target ≤ 2.00)`, `CPU ${sweImport.cpuMs.toFixed(0)} vs ${sweParse.cpuMs.toFixed(0)} ms (${(sweImport.cpuMs / sweParse.cpuMs).toFixed(2)}×), ${load(sweImport)}`]);
  }
  for (const r of rows) console.log(`${r[0]!.padEnd(42)} ${r[1]!.padEnd(14)} ${r[2]!.padEnd(16)} ${r[3]!.padEnd(44)} ${r[4]}`);
  const result = {
    format: FORMAT,
    rollouts: N,
    bytes,
    ingestRatio,
    ingestCpuRatio: base.cpuMs / ours.cpuMs,
    importPeakRssMb: ours.maxRssMb,
    oneP95Ms: q?.oneP95 ?? null,
    pageP95Ms: q?.pageP95 ?? null,
    sweRatio,
    load: { baseline: base.load, import: ours.load },
  };
  const targets = {
    ingestRatio: ingestRatio >= 0.8,
    rss: ours.maxRssMb <= 1024,
    ...(q ? { one: (q.oneP95 as number) < 20, page: (q.pageP95 as number) < 50 } : {}),
    ...(sweRatio !== null ? { swe: sweRatio <= 2 } : {}),
  };
  console.log(`targets: ${Object.entries(targets).map(([k, v]) => `${k} ${v ? 'met' : 'MISSED'}`).join(', ')}`);
  if (args.includes('--json')) console.log(JSON.stringify({ ...result, targets }));
  const mbps = (r: PhaseResult) => `${((bytes / 1e6) / (r.ms / 1000)).toFixed(0)} MB/s`;
  const figures: Figure[] = [
    { figure: `${FORMAT} ingest, ${N.toLocaleString('en')} rollouts (${(bytes / 1e9).toFixed(2)} GB)`, ours: `${(ours.ms / 1000).toFixed(1)} s, ${mbps(ours)}; ${cpu(ours)}; ${load(ours)}; ${readBy}`, baseline: `DuckDB read_json ${(base.ms / 1000).toFixed(1)} s, ${mbps(base)}; ${cpu(base)}; ${load(base)}`, ratio: `${ingestRatio.toFixed(2)}× throughput (CPU ${(base.cpuMs / ours.cpuMs).toFixed(2)}×)`, target: '≥ 0.80×', met: targets.ingestRatio },
    { figure: `${FORMAT} import peak RSS`, ours: `${ours.maxRssMb.toFixed(0)} MB`, baseline: `read_json ${base.maxRssMb.toFixed(0)} MB`, target: '≤ 1024 MB', met: targets.rss },
  ];
  if (q) {
    figures.push({ figure: 'one rollout + steps', ours: `p95 ${(q.oneP95 as number).toFixed(1)} ms, p50 ${(q.oneP50 as number).toFixed(1)} ms; ${load(q)}`, target: 'p95 < 20 ms', met: targets.one });
    figures.push({ figure: 'filtered sorted page of 100', ours: `p95 ${(q.pageP95 as number).toFixed(1)} ms, p50 ${(q.pageP50 as number).toFixed(1)} ms`, target: 'p95 < 50 ms', met: targets.page });
  }
  if (sweParse && sweImport) {
    figures.push({ figure: '303 SWE trajectories with steps', ours: `${sweImport.ms.toFixed(0)} ms; CPU ${sweImport.cpuMs.toFixed(0)} ms; ${load(sweImport)}`, baseline: `JSON.parse ${sweParse.ms.toFixed(0)} ms; CPU ${sweParse.cpuMs.toFixed(0)} ms`, ratio: `${sweRatio!.toFixed(2)}× (CPU ${(sweImport.cpuMs / sweParse.cpuMs).toFixed(2)}×)`, target: '≤ 2.00×', met: targets.swe });
  }
  // One record per format: the README's table shows a row per format.
  const bench = FORMAT === 'verl' ? 'ingest' : `ingest-${FORMAT}`;
  recordBench(bench, FORMAT === 'verl' ? 'npm run bench:ingest' : `npm run bench:ingest -- --format ${FORMAT}`, N === 1_000_000, machineLoad.stop(), figures);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

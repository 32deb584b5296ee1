// `npm run bench:lineage`: builds a harness with N versions and their evidence (default
// 1,000) using git fast-import, then times `evotrainer lineage` (the engine function) on
// both read paths — the git CLI (simple-git + one cat-file --batch) and isomorphic-git —
// against a bare `git for-each-ref` of the same refs, run in the same process.
//   --versions N   versions to create (default 1000)
//   --runs N       timed runs per measurement, median reported (default 9)
//   --dir DIR      where to build the harness (default: a temp dir, removed afterwards)
//   --json         end with one JSON line of the results
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { LedgerEntry } from '../../src/core/harness/ledger';
import { git } from '../../src/core/harness/git';
import { initHarness } from '../../src/core/harness/init';
import { DEFAULT_READER, lineage, type LineageReader } from '../../src/core/harness/lineage';
import type { VersionId, VersionStatus } from '../../src/core/model';
import { arg as opt, args } from './common';
import { recordBench, watchLoad } from './results';

const N = Number(opt('versions', '1000'));
const RUNS = Number(opt('runs', '9'));
const load = watchLoad();
const json = args.includes('--json');
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(RUNS) || RUNS < 1) {
  console.error('--versions and --runs must be positive integers');
  process.exit(2);
}
const given = opt('dir', '');
const base = given || mkdtempSync(path.join(os.tmpdir(), 'evotrainer-bench-lineage-'));
const env = { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' };
Object.assign(process.env, env);

/** Deterministic pseudo-random numbers, so every run builds the same tree. */
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function time(fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn(); // warm-up: file cache, JIT
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;

async function main() {
  const dir = path.join(base, 'harness');
  const t0 = performance.now();
  const { harness: h, commit: v0commit, entry: v0 } = await initHarness(dir);

  // Phase 1: the version commits, each on its parent (a tree: mostly deepening lines, some forks).
  const parents: number[] = [0];
  let stream = '';
  for (let i = 1; i <= N; i++) {
    const parent = rand() < 0.7 ? i - 1 : Math.floor(rand() * i);
    parents.push(parent);
    const msg = `v${i}: bench intervention ${i}\n\nEvo-Version: v${i}\nEvo-Parent: v${parent}\nEvo-Hypothesis: If we change factor ${i}, pass_rate improves\nEvo-Target-Metric: pass_rate\nEvo-Success: pass_rate > 0.3\nEvo-Layer: reward\n`;
    stream += `commit refs/heads/evo/v${i}-bench-${i}\nmark :${i}\ncommitter bench <bench@example.invalid> ${1_700_000_000 + i} +0000\n${data(msg)}from ${parent === 0 ? v0commit : `:${parent}`}\nM 100644 inline reward/params_${i % 50}.json\n${data(JSON.stringify({ weight: i / N }))}\n`;
  }
  const marksFile = path.join(base, 'marks');
  await git(dir, ['fast-import', '--quiet', `--export-marks=${marksFile}`], { input: stream });
  const oid = new Map<number, string>([[0, v0commit]]);
  for (const line of readFileSync(marksFile, 'utf8').split('\n')) {
    const m = /^:(\d+) ([0-9a-f]{40})$/.exec(line);
    if (m) oid.set(Number(m[1]), m[2]!);
  }

  // Phase 2: the ledger — one file per version with its evidence, in one commit on evo/ledger.
  const statuses: VersionStatus[] = ['rejected', 'promoted', 'evaluated', 'training', 'backtested', 'proposed'];
  const ledgerFiles: string[] = [];
  const metric = new Map<number, number>([[0, 0.3]]);
  for (let i = 1; i <= N; i++) {
    const id = `v${i}` as VersionId;
    const status = statuses[Math.floor(rand() * statuses.length)]!;
    const value = Number((0.25 + rand() * 0.2).toFixed(4));
    metric.set(i, value);
    const evaluated = status === 'evaluated' || status === 'promoted' || status === 'rejected';
    const at = new Date(1_700_000_000_000 + i * 60_000).toISOString();
    const e: LedgerEntry = {
      schema: 1,
      id,
      branch: `evo/${id}-bench-${i}`,
      parent: `v${parents[i]}` as VersionId,
      base: oid.get(parents[i]!)!,
      commit: oid.get(i)!,
      status,
      layer: 'reward',
      createdAt: at,
      hypothesis: { change: `If we change factor ${i}, pass_rate improves`, targetMetric: 'pass_rate', because: 'bench', successCriterion: 'pass_rate > 0.3' },
      intervention: { layer: 'reward', factor: `reward/params_${i % 50}.json`, description: `factor ${i}`, changedPaths: [`reward/params_${i % 50}.json`], frozen: ['data/eval.jsonl'], rollbackPlan: `check out v${parents[i]}` },
      metrics: evaluated ? { pass_rate: value, dead_group_ratio: Number((rand() * 0.6).toFixed(4)), 'backtest.revived': Math.floor(rand() * 50) } : {},
      primaryMetric: 'pass_rate',
      transitions: [
        { from: null, to: 'proposed', at, by: 'bench', evidence: [{ kind: 'note', summary: `hypothesis ${i}` }] },
        ...(status !== 'proposed' ? [{ from: 'proposed' as const, to: 'backtested' as const, at, by: 'bench', evidence: [{ kind: 'backtest' as const, summary: `${Math.floor(rand() * 60)}% of dead groups regained variance; 0 ordering violations`, data: { rollouts: 4096, deadGroupsBefore: 512, deadGroupsRevived: 230, orderingViolations: 0 } }] }] : []),
      ],
      decision: status === 'promoted' || status === 'rejected' ? { version: id, gate: 'promotion', decision: status === 'promoted' ? 'promote' : 'reject', reasons: [{ check: 'primary metric', passed: status === 'promoted', detail: `pass_rate ${value}` }], decidedAt: at, decidedBy: 'gate' } : null,
      ...(status === 'rejected' ? { rejectReason: 'regressed' } : {}),
    };
    ledgerFiles.push(`M 100644 inline versions/${id}.json\n${data(JSON.stringify(e, null, 2) + '\n')}`);
  }
  const ledgerHead = (await git(dir, ['rev-parse', 'refs/heads/evo/ledger'])).stdout.trim();
  const ledgerStream = `commit refs/heads/evo/ledger\ncommitter bench <bench@example.invalid> 1700000000 +0000\n${data(`bench: ${N} versions`)}from ${ledgerHead}\n${ledgerFiles.join('')}\n`;
  await git(dir, ['fast-import', '--quiet'], { input: ledgerStream });
  await git(dir, ['gc', '--quiet']); // pack refs and objects, as a repo of this age would be
  const generateMs = performance.now() - t0;
  void v0;

  // Same refs as the lineage reads.
  const baseline = await time(() => spawnSync('git', ['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/evo/', 'refs/remotes/'], { cwd: dir, encoding: 'utf8' }));
  const measured: Record<LineageReader, number> = { git: 0, 'isomorphic-git': 0 };
  const results: Partial<Record<LineageReader, Awaited<ReturnType<typeof lineage>>>> = {};
  for (const reader of ['git', 'isomorphic-git'] as const) {
    results[reader] = await lineage(h, reader);
    measured[reader] = await time(() => lineage(h, reader));
  }
  const count = results.git!.versions.length;
  if (count !== N + 1) throw new Error(`lineage saw ${count} versions, expected ${N + 1}`);
  if (!isDeepStrictEqual(results.git, results['isomorphic-git'])) throw new Error('the two read paths disagree on the lineage');
  const faster: LineageReader = measured.git <= measured['isomorphic-git'] ? 'git' : 'isomorphic-git';

  const cliJs = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
  let cliMs: number | null = null;
  if (existsSync(cliJs)) cliMs = await time(() => spawnSync(process.execPath, [cliJs, 'lineage', '--json'], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28 }));

  const engine = measured[DEFAULT_READER];
  const ratio = (x: number) => (x / baseline).toFixed(2);
  console.log(`lineage benchmark: ${N} versions + v0, each with ledger evidence (median of ${RUNS} runs)`);
  console.log(`  generate (fast-import, gc)                     ${generateMs.toFixed(0)} ms`);
  console.log(`  baseline: bare git for-each-ref of the refs     ${baseline.toFixed(1)} ms`);
  console.log(`  lineage, git read path (simple-git + cat-file)  ${measured.git.toFixed(1)} ms  ratio ${ratio(measured.git)}× baseline`);
  console.log(`  lineage, isomorphic-git read path               ${measured['isomorphic-git'].toFixed(1)} ms  ratio ${ratio(measured['isomorphic-git'])}× baseline`);
  console.log(`  faster read path: ${faster}; the engine's default is ${DEFAULT_READER}${faster === DEFAULT_READER ? '' : ' (consider switching DEFAULT_READER)'}`);
  if (cliMs !== null) console.log(`  evotrainer lineage --json, whole process       ${cliMs.toFixed(0)} ms (node start-up included)`);
  console.log(`  target: lineage < 500 ms → ${engine < 500 ? 'met' : 'MISSED'} (${engine.toFixed(1)} ms, ratio ${ratio(engine)}× baseline)`);
  if (json) console.log(JSON.stringify({ versions: N, generateMs, baselineMs: baseline, gitMs: measured.git, isomorphicMs: measured['isomorphic-git'], ratio: engine / baseline, faster, defaultReader: DEFAULT_READER, cliMs }));
  recordBench('lineage', 'npm run bench:lineage', N === 1000 && RUNS === 9, load.stop(), [
    { figure: `lineage of ${N.toLocaleString('en')} versions with ledger evidence (${DEFAULT_READER} read path), median of ${RUNS}`, ours: `${engine.toFixed(1)} ms`, baseline: `bare git for-each-ref ${baseline.toFixed(1)} ms`, ratio: `${(engine / baseline).toFixed(2)}× the time`, target: '< 500 ms', met: engine < 500 },
  ]);
}

main()
  .catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exitCode = 1;
  })
  .finally(() => {
    if (!given) rmSync(base, { recursive: true, force: true });
  });

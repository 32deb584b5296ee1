import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { computeHealth } from '../../src/core/diagnose/health';
import { initHarness } from '../../src/core/harness/init';
import { RolloutStore } from '../../src/core/store/store';
import { repoRoot, tempDir } from '../helpers/tmp';

/** One short, real training run (python3, GRPO) of the harness at `dir`. */
function train(dir: string, out: string, args: string[] = []): { status: number | null; stderr: string; metrics: Record<string, unknown> | null } {
  const r = spawnSync('python3', ['train/train.py', '--out', out, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  const file = path.join(out, 'metrics.json');
  // What the job engine keeps of a run: its console output, as `log` in the job directory.
  if (r.status === 0) writeFileSync(path.join(out, 'log'), r.stdout);
  return { status: r.status, stderr: r.stderr, metrics: r.status === 0 && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : null };
}

const dumps = (out: string) => ['rollout_data', 'validation_data'].flatMap((d) => readdirSync(path.join(out, d)).sort().map((f) => readFileSync(path.join(out, d, f), 'utf8')));

for (const t of [
  { template: 'toy-agentic', domain: 'toy-swe' },
  { template: 'toy-math', domain: 'toy-math' },
]) {
  describe(`${t.template} template: real GRPO training in python3, imported with the real verl importer`, () => {
    const root = tempDir();
    const harness = path.join(root, 'harness');
    const out = path.join(root, 'run-a');
    const short = ['--seed', '0', '--steps', '3', '--eval-limit', '10'];

    before(async () => {
      const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
      assert.equal(r.status, 0, 'python3 must be installed (the template trains with python3 alone)');
      const init = await initHarness(harness, t.template);
      assert.match(init.evalPinned ?? '', /^sha256:/);
    });

    it("passes the harness's own Python checks (environment, reward, filters, determinism)", () => {
      const r = spawnSync('python3', ['-m', 'unittest', '-v'], { cwd: harness, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
      const outText = `${r.stdout}\n${r.stderr}`;
      assert.equal(r.status, 0, outText.slice(-3000));
      assert.match(outText, /^Ran [5-9] tests in/m);
      assert.match(outText, /^OK$/m, 'a plain OK: skipped tests count as failures');
    });

    it('trains and writes verl dumps, raw and honest evals, and metrics', () => {
      const r = train(harness, out, short);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(readdirSync(path.join(out, 'rollout_data')).sort(), ['3.jsonl'], 'dumps every dump_every steps and the last');
      const val = readFileSync(path.join(out, 'validation_data', '3.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const sources = new Set(val.map((v) => v.data_source));
      assert.deepEqual([...sources].sort(), [t.domain, `${t.domain}-honest`]);
      const first = val[0]!;
      for (const k of ['input', 'output', 'gts', 'score', 'step', 'data_source', 'acc']) assert.ok(k in first, `dump rows carry ${k}`);
      assert.match(String(first.output), /```bash\n[\s\S]*?\n```<\|im_end\|>\n<\|im_start\|>user\n<tool_response>\n<returncode>\d+<\/returncode>/);
      const m = r.metrics!;
      assert.equal((m.dead_group_ratio as number[]).length, 3);
      for (const k of ['pass_rate', 'honest_pass_rate', 'leak_share', 'wall_time_s']) assert.equal(typeof m[k], 'number', k);
    });

    it('imports the dumps with steps: turns, tool calls and exit codes populate the behavior metrics', async () => {
      const store = await RolloutStore.open(path.join(root, 'store.duckdb'));
      try {
        const summary = await store.import([path.join(out, 'rollout_data'), path.join(out, 'validation_data')], { run: 'toy' });
        assert.equal(summary.ignored.length, 0);
        const [c] = await store.all<{ rollouts: number; with_steps: number; exits: number }>(
          `select count(*) as rollouts, count(*) filter (where id in (select rollout_id from steps)) as with_steps,
                  (select count(*) from steps where exit_code is not null) as exits from rollouts`,
        );
        assert.ok(c!.rollouts > 0);
        assert.equal(c!.with_steps, c!.rollouts, 'every rollout has its steps');
        assert.ok(c!.exits > 0);
        const health = await computeHealth(store, { run: 'toy', split: 'val' });
        const value = (name: string) => health.metrics.find((x) => x.name === name)?.value ?? null;
        assert.ok((value('turns') ?? 0) >= 1, 'turns per trajectory');
        assert.notEqual(value('git_history_share'), null);
        assert.notEqual(value('dead_group_ratio'), null);
      } finally {
        store.close();
      }
    });

    it("logs each step as verl's console logger does; imported with the run, the model-state dimension has values", async () => {
      const store = await RolloutStore.open(path.join(root, 'store.duckdb'));
      try {
        const summary = await store.import([out], { run: 'toy-run' });
        assert.deepEqual(summary.curves?.files.map((f) => [path.basename(f.file), f.format, f.points]), [['log', 'verl-console', 3 * 7]]);
        const health = await computeHealth(store, { run: 'toy-run' });
        const metric = (name: string) => health.metrics.find((x) => x.name === name)!;
        const steps = readFileSync(path.join(out, 'log'), 'utf8').split('\n').filter((l) => l.startsWith('step:'));
        assert.equal(steps.length, 3);
        const lastEntropy = Number(/ - actor\/entropy:([\d.]+)/.exec(steps[2]!)![1]);
        assert.equal(metric('entropy').value, lastEntropy, 'the last tenth of 3 steps is the last step');
        assert.notEqual(metric('grad_norm').value, null);
        assert.notEqual(metric('entropy_drop').value, null);
        assert.equal(metric('kl').value, null, 'the toy trainer has no reference policy: not available');
      } finally {
        store.close();
      }
    });

    it('re-scores its dumped rollouts to the same scores from the dump rows alone (what a backtest does)', () => {
      const script = [
        'import importlib.util, json, sys',
        'spec = importlib.util.spec_from_file_location("r", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
        'rows = [json.loads(l) for f in sys.argv[2:] for l in open(f)]',
        'bad = [r for r in rows if abs(m.compute_score(r["data_source"], r["output"], r["gts"], r)["score"] - r["score"]) > 1e-9]',
        'print(len(rows), len(bad))',
      ].join('\n');
      const files = [path.join(out, 'rollout_data', '3.jsonl'), path.join(out, 'validation_data', '3.jsonl')];
      const r = spawnSync('python3', ['-c', script, path.join(harness, 'reward', 'compute_score.py'), ...files], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const [n, bad] = r.stdout.trim().split(' ').map(Number);
      assert.ok(n! > 100);
      assert.equal(bad, 0);
    });

    it('is deterministic for a seed, and another seed samples differently', () => {
      const again = train(harness, path.join(root, 'run-b'), short);
      assert.equal(again.status, 0, again.stderr);
      assert.deepEqual(dumps(path.join(root, 'run-b')), dumps(out));
      const other = train(harness, path.join(root, 'run-c'), ['--seed', '1', '--steps', '3', '--eval-limit', '10']);
      assert.equal(other.status, 0, other.stderr);
      assert.notDeepEqual(dumps(path.join(root, 'run-c')), dumps(out));
    });

    it('trains with the reward of the harness tree it runs in, and says where a broken harness file is', () => {
      const cfgFile = path.join(harness, 'reward', 'config.json');
      const original = readFileSync(cfgFile, 'utf8');
      try {
        const cfg = JSON.parse(original) as { weights: Record<string, number> };
        cfg.weights = Object.fromEntries(Object.keys(cfg.weights).map((k) => [k, 0]));
        writeFileSync(cfgFile, JSON.stringify(cfg));
        const zero = train(harness, path.join(root, 'run-zero'), ['--steps', '1', '--eval-limit', '2']);
        assert.equal(zero.status, 0, zero.stderr);
        const rows = readFileSync(path.join(root, 'run-zero', 'rollout_data', '1.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { score: number });
        assert.ok(rows.every((r) => r.score === 0), 'all reward weights 0 => every score 0');
        writeFileSync(cfgFile, '{"weights": {"acc": 1.0,,}}');
        const broken = train(harness, path.join(root, 'run-broken'), ['--steps', '1', '--eval-limit', '2']);
        assert.notEqual(broken.status, 0);
        assert.match(broken.stderr, /reward[/\\]compute_score\.py: cannot be imported \(JSONDecodeError: .*line 1/);
      } finally {
        writeFileSync(cfgFile, original);
      }
    });
  });
}

describe('toy templates share one trainer', () => {
  it('toy-agentic and toy-math carry the same trainer core, filters and scenario script', () => {
    const dir = path.join(repoRoot, 'harness-templates');
    for (const f of ['train/grpo.py', 'scenario.py']) assert.equal(readFileSync(path.join(dir, 'toy-math', f), 'utf8'), readFileSync(path.join(dir, 'toy-agentic', f), 'utf8'), f);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { curveSeries } from '../../src/core/diagnose/curves';
import { computeHealth, computeSeries } from '../../src/core/diagnose/health';
import { evaluateRules } from '../../src/core/diagnose/rules';
import { RolloutStore } from '../../src/core/store/store';
import { collapsingRun, healthyRun, verlStepLine, writeEventFile, writeMlflowRun, writeVerlLog } from '../helpers/curves';
import { repoRoot, tempDir } from '../helpers/tmp';

const fixture = path.join(repoRoot, 'test', 'fixtures', 'curves', 'verl-console', 'train.log');
const bin = path.join(repoRoot, 'bin', 'evotrainer.js');
const cli = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repoRoot });

const valueAt = async (store: RolloutStore, run: string, metric: string, step: number) => (await store.one<{ value: number }>(`select value from metrics where run_id = ? and metric = ? and step = ?`, [run, metric, step]))?.value;
const metricOf = (h: Awaited<ReturnType<typeof computeHealth>>, name: string) => h.metrics.find((m) => m.name === name)!;

/** Mean of the last tenth (at least one) of a series: the catalog's reading of a curve, computed apart. */
const lastTenth = (xs: number[]) => {
  const w = Math.max(1, Math.ceil(xs.length / 10));
  return xs.slice(-w).reduce((a, b) => a + b, 0) / w;
};
const firstTenth = (xs: number[]) => lastTenth([...xs].reverse());

describe('training curves in the store', () => {
  it('imports a verl console log: the resumed run\'s repeated step takes the later value; re-import adds nothing', async () => {
    const store = await RolloutStore.open(':memory:');
    try {
      const s = await store.import([fixture], { run: 'gsm8k', version: 'v2' });
      assert.equal(s.files.length, 0, 'not taken for a rollout dump');
      const c = s.curves!;
      assert.equal(c.files[0]!.format, 'verl-console');
      assert.equal(c.badRecords, 1);
      assert.equal(c.problems[0]!.line, readFileSync(fixture, 'utf8').split('\n').findIndex((l) => l.includes('actor/grad_nor(')) + 1);
      assert.equal(await valueAt(store, 'gsm8k', 'actor/entropy', 6), 0.2504);
      assert.equal(await valueAt(store, 'gsm8k', 'actor/entropy', 7), 0.2013);
      assert.equal(await valueAt(store, 'gsm8k', 'val-core/openai/gsm8k/reward/mean@1', 0), 0.2113);
      assert.ok(Number.isNaN(await valueAt(store, 'gsm8k', 'actor/grad_norm', 7)));
      const n = (await store.one<{ n: number; v: string }>(`select count(*) as n, any_value(version) as v from metrics`))!;
      assert.equal(n.v, 'v2');
      const again = await store.import([fixture], { run: 'gsm8k', version: 'v2' });
      assert.equal(again.curves!.files[0]!.status, 'unchanged');
      assert.equal((await store.one<{ n: number }>(`select count(*) as n from metrics`))!.n, n.n);
      assert.equal((await store.one<{ n: number }>(`select count(*) as n from metric_rows`))!.n, c.points, 'nothing appended twice');
    } finally {
      store.close();
    }
  });

  it('follows a log still being written: each import reads on from the last complete line', async () => {
    const dir = tempDir();
    const live = path.join(dir, 'job', 'log');
    mkdirSync(path.dirname(live), { recursive: true });
    const text = readFileSync(fixture);
    const cut = text.indexOf('step:3 - ') + 40; // mid-line
    writeFileSync(live, text.subarray(0, text.indexOf('step:0 - ')));
    const store = await RolloutStore.open(':memory:');
    try {
      const early = await store.import([live], { run: 'live' });
      assert.deepEqual([early.curves, early.ignored.map((i) => i.file)], [undefined, [live]], 'a job log before its first step: nothing yet, no error');
      assert.match(early.ignored[0]!.reason, /no training-curve line yet/);
      writeFileSync(live, text.subarray(0, cut));
      const first = (await store.import([path.join(dir, 'job')], { run: 'live' })).curves!;
      assert.deepEqual((await store.all<{ step: number }>(`select distinct step from metrics order by 1`)).map((r) => r.step), [0, 1, 2]);
      appendFileSync(live, text.subarray(cut));
      const second = (await store.import([path.join(dir, 'job')], { run: 'live' })).curves!;
      assert.equal(second.files[0]!.resumed, true);
      const whole = await RolloutStore.open(':memory:');
      const all = (await whole.import([fixture], { run: 'live' })).curves!;
      const expected = await whole.all(`select step, metric, value from metrics order by all`);
      whole.close();
      assert.equal(first.points + second.points, all.points);
      assert.deepEqual(await store.all(`select step, metric, value from metrics order by all`), expected);
    } finally {
      store.close();
    }
  });

  it('imports TensorBoard event files, verl\'s file logger and an MLflow store found in a run directory', async () => {
    const dir = tempDir();
    const run = path.join(dir, 'run-9');
    writeEventFile(path.join(run, 'tensorboard_log', 'gsm8k', 'grpo'), healthyRun(12));
    writeFileSync(path.join(run, 'metrics.jsonl'), healthyRun(12).map((d, i) => JSON.stringify({ step: i + 1, data: { ...d, 'actor/grad_norm': i === 3 ? 'NaN-token' : d['actor/grad_norm'] } }).replace('"NaN-token"', 'NaN')).join('\n') + '\n');
    writeMlflowRun(path.join(run, 'mlruns'), 'a1b2c3', 'grpo-mlflow', healthyRun(12));
    mkdirSync(path.join(run, 'rollout_data'));
    writeFileSync(path.join(run, 'rollout_data', '1.jsonl'), `${JSON.stringify({ input: 'What is 2+2?', output: 'A: 4', gts: '4', score: 1, step: 1 })}\n`);
    const store = await RolloutStore.open(':memory:');
    try {
      const s = await store.import([run], { version: 'v1' });
      assert.equal(s.rollouts, 1, 'the rollout dump beside them still imports');
      assert.deepEqual(s.ignored, [], 'curve files are not reported as unknown dumps');
      const formats = s.curves!.files.map((f) => `${f.format}:${f.run}`).sort();
      assert.deepEqual([...new Set(formats)], ['mlflow:grpo-mlflow', 'tensorboard:run-9', 'verl-file:run-9']);
      const expected = healthyRun(12)[4]!['actor/entropy'];
      assert.equal(await valueAt(store, 'grpo-mlflow', 'actor/entropy', 5), expected);
      // Both files log run-9's entropy; the one imported later (tensorboard_log/ walks after metrics.jsonl) stands.
      assert.equal(await valueAt(store, 'run-9', 'actor/entropy', 5), Math.fround(expected));
      assert.equal((await store.one<{ value: number }>(`select value from metric_rows where source = 'verl-file' and metric = 'actor/entropy' and step = 5`))!.value, expected);
      assert.ok(Number.isNaN((await store.one<{ value: number }>(`select value from metric_rows where source = 'verl-file' and metric = 'actor/grad_norm' and step = 4`))!.value), "the file logger's NaN is kept");
      const tb = await store.one<{ value: number; wall_time: number }>(`select value, wall_time from metric_rows where source = 'tensorboard' and metric = 'actor/entropy' and step = 5`);
      assert.equal(tb!.value, Math.fround(expected));
      assert.equal(tb!.wall_time, 1_764_000_000 + 300);
      const runs = await store.all<{ id: string }>(`select id from runs order by id`);
      assert.deepEqual(runs.map((r) => r.id), ['grpo-mlflow', 'run-9']);
    } finally {
      store.close();
    }
  });

  it('health reads model-state values from the curves; R3 fires on a collapsing run and not on a healthy one', async () => {
    const dir = tempDir();
    writeVerlLog(path.join(dir, 'collapse', 'train.log'), collapsingRun());
    writeEventFile(path.join(dir, 'healthy'), healthyRun());
    const store = await RolloutStore.open(':memory:');
    try {
      await store.import([path.join(dir, 'collapse'), path.join(dir, 'healthy')], {});
      const diagnose = async (run: string) => {
        const health = await computeHealth(store, { run });
        return { health, findings: evaluateRules({ health, series: await computeSeries(store, { run }) }) };
      };
      const c = await diagnose('collapse');
      const ent = collapsingRun().map((v) => v['actor/entropy']);
      assert.ok(Math.abs(metricOf(c.health, 'entropy').value! - lastTenth(ent)) < 1e-12);
      assert.ok(Math.abs(metricOf(c.health, 'entropy_drop').value! - (1 - lastTenth(ent) / firstTenth(ent))) < 1e-12);
      assert.equal(metricOf(c.health, 'entropy_drop').status, 'critical');
      assert.ok(metricOf(c.health, 'grad_norm').value! > 0 && metricOf(c.health, 'clip_ratio').value === 0.002);
      assert.equal(metricOf(c.health, 'kl').value, null, 'not logged: not available, not zero');
      assert.equal(c.health.curvePoints, 4 * 60);
      assert.deepEqual(c.findings.map((f) => f.rule), ['R3', 'R3-REWARD']);
      assert.ok(c.findings.every((f) => f.dimension === 'model_state'));

      const h = await diagnose('healthy');
      assert.ok(metricOf(h.health, 'entropy').value! > 0.4);
      assert.equal(metricOf(h.health, 'entropy_drop').status, 'ok');
      assert.deepEqual(h.findings.map((f) => f.rule), []);
    } finally {
      store.close();
    }
  });

  it('puts a curve beside the rollouts dumped at each step, per run and version, under its catalog name', async () => {
    const dir = tempDir();
    const run = path.join(dir, 'v7-train');
    mkdirSync(path.join(run, 'rollout_data'), { recursive: true });
    writeFileSync(path.join(run, 'job.log'), [1, 2, 3].map((s) => verlStepLine(s, { 'actor/entropy_loss': 0.6 - s / 10, 'critic/score/mean': s / 10 })).join('\n') + '\n');
    const row = (score: number) => JSON.stringify({ input: 'What is 2+2?', output: score ? 'A: 4' : 'A: 5', gts: '4', score, step: 2, acc: score === 1 });
    writeFileSync(path.join(run, 'rollout_data', '2.jsonl'), [row(1), row(0), row(1), row(1)].join('\n') + '\n');
    const store = await RolloutStore.open(':memory:');
    try {
      await store.import([run], { version: 'v7' });
      const [s] = await curveSeries(store, 'entropy', { run: 'v7-train' });
      assert.equal(s!.metric, 'actor/entropy_loss', "older verl's name for the entropy");
      assert.equal(s!.version, 'v7');
      assert.deepEqual(s!.points.map((p) => [p.step, p.rollouts, p.passRate, p.rewardMean]), [[1, 0, null, null], [2, 4, 0.75, 0.75], [3, 0, null, null]]);
      assert.ok(Math.abs(s!.points[1]!.value - 0.4) < 1e-12);
    } finally {
      store.close();
    }
  });

  it('evotrainer import and health on a real-shaped log: the bad line named with file:line, model state with values', () => {
    const dir = tempDir();
    const log = path.join(dir, 'train.log');
    copyFileSync(fixture, log);
    const store = path.join(dir, 's.duckdb');
    const r = cli(['import', log, '--run', 'gsm8k', '--store', store]);
    assert.equal(r.status, 0, r.stderr);
    const line = readFileSync(log, 'utf8').split('\n').findIndex((l) => l.includes('actor/grad_nor(')) + 1;
    assert.match(r.stdout, /Imported \d+ training-curve values from 1 file\(s\) \(verl-console\)/);
    assert.ok(r.stdout.includes(`${log}:${line}: step 6: not key:number`), r.stdout);
    const h = cli(['health', '--run', 'gsm8k', '--store', store]);
    assert.equal(h.status, 0, h.stderr);
    assert.match(h.stdout, /\n {2}entropy {2,}0\.\d{3}/);
    assert.match(h.stdout, /\n {2}entropy_drop {2,}\d+\.\d%/);
    const list = cli(['curves', '--store', store]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /^gsm8k {2,}actor\/entropy {2,}8 {2,}1–8 {2,}0\.1688$/m);
    const e = cli(['curves', 'entropy', '--store', store, '--steps', '5:7']);
    assert.equal(e.status, 0, e.stderr);
    assert.deepEqual(e.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/).slice(0, 2)), [['5', '0.3921'], ['6', '0.2504'], ['7', '0.2013']]);
  });
});

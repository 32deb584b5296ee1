import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { computeHealth, computeSeries } from '../../src/core/diagnose/health';
import { evaluateRules } from '../../src/core/diagnose/rules';
import { validateMetric } from '../../src/core/diagnose/validate';
import { CATALOG } from '../../src/core/diagnose/catalog';
import { RolloutStore } from '../../src/core/store/store';
import { GSM8K_MAPPING, gsm8kFile, requireSharedData, sweDir } from '../helpers/data';
import { commandMix, writeTrajectory } from '../helpers/synth';
import { tempDir } from '../helpers/tmp';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const metricOf = (h: Awaited<ReturnType<typeof computeHealth>>, name: string) => h.metrics.find((m) => m.name === name)!.value;

describe('health report and metric validation on the real data', () => {
  let store: RolloutStore;
  before(async () => {
    store = await RolloutStore.open(':memory:');
    await store.import([path.join(sweDir, 'trajs')], { run: 'swe' });
    await store.import([gsm8kFile], { run: 'gsm8k', format: 'jsonl', mapping: GSM8K_MAPPING });
  });

  it('SWE: real values, each checked against an independent count from the trajectory files', async () => {
    const h = await computeHealth(store, { run: 'swe' });
    let turns = 0;
    let timeouts = 0;
    let leaks = 0;
    let formatErrors = 0;
    let assistantTurns = 0;
    const files = readdirSync(path.join(sweDir, 'trajs'));
    for (const f of files) {
      const doc = JSON.parse(readFileSync(path.join(sweDir, 'trajs', f), 'utf8')) as { messages: { role: string; content: string }[] };
      const asst = doc.messages.filter((m) => m.role === 'assistant');
      turns += asst.length;
      assistantTurns += asst.length;
      if (doc.messages.some((m, i) => i > 1 && m.role === 'user' && /^The last command <command>[\s\S]*?<\/command> timed out/.test(m.content))) timeouts++;
      if (asst.some((m) => /```(?:bash)?\s*\n[^`]*\bgit\s+(log|show|blame|reflog|rev-list|whatchanged|cat-file)\b/.test(m.content))) leaks++;
      doc.messages.forEach((m, i) => {
        if (m.role !== 'assistant') return;
        const blocks = m.content.match(/```(?:bash|sh|shell)?[ \t]*\r?\n[\s\S]*?```/g) ?? [];
        const next = doc.messages[i + 1];
        if (blocks.length !== 1 || (next?.role === 'user' && next.content.startsWith('Please always provide EXACTLY ONE action'))) formatErrors++;
      });
    }
    assert.equal(h.rollouts, 303);
    assert.ok(Math.abs(metricOf(h, 'pass_rate')! - 224 / 303) < 1e-9);
    assert.ok(Math.abs(metricOf(h, 'turns')! - turns / files.length) < 1e-9, `turns ${metricOf(h, 'turns')} vs ${turns / files.length}`);
    assert.ok(Math.abs(metricOf(h, 'timeout_rate')! - timeouts / files.length) < 1e-9, `timeouts ${metricOf(h, 'timeout_rate')} vs ${timeouts}/${files.length}`);
    assert.ok(Math.abs(metricOf(h, 'git_history_share')! - leaks / files.length) < 1e-9, `leak ${metricOf(h, 'git_history_share')} vs ${leaks}/${files.length}`);
    assert.ok(Math.abs(metricOf(h, 'format_error_rate')! - formatErrors / assistantTurns) < 1e-9, `format errors ${metricOf(h, 'format_error_rate')} vs ${formatErrors}/${assistantTurns}`);
    assert.ok(metricOf(h, 'first_edit_turn')! > 1 && metricOf(h, 'self_test_rate')! > 0.5);
    assert.equal(metricOf(h, 'mean_logprob'), null, 'not in this dump: not available, not zero');
    assert.equal(h.metrics.find((m) => m.name === 'mean_logprob')!.status, 'n/a');
    // 2 of 303 honest trajectories ran git log: a warning to read, not the critical leak the gate rejects (> 5%).
    assert.equal(h.metrics.find((m) => m.name === 'git_history_share')!.status, 'warning');
    assert.equal(metricOf(h, 'answer_in_context_share'), 0, 'no honest trajectory was shown its patch before writing it');
  });

  it('GSM8K: dead-group ratio and no-extractable-answer rate match independent counts', async () => {
    const h = await computeHealth(store, { run: 'gsm8k' });
    const lines = readFileSync(gsm8kFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, { is_correct: boolean; solution: string }>);
    const samples = GSM8K_MAPPING.samples;
    const dead = lines.filter((l) => new Set(samples.map((s) => l[s]!.is_correct)).size === 1).length;
    const noAnswer = lines.flatMap((l) => samples.map((s) => l[s]!.solution)).filter((t) => !/^A:\s*\S/m.test(t) && !/\\boxed\{/.test(t) && !/####\s*\S/.test(t) && !/answer is/i.test(t)).length;
    assert.equal(h.groups, 983);
    assert.ok(Math.abs(metricOf(h, 'dead_group_ratio')! - dead / 983) < 1e-9, `dead ${metricOf(h, 'dead_group_ratio')} vs ${dead}/983`);
    assert.ok(Math.abs(metricOf(h, 'no_answer_rate')! - noAnswer / 3932) < 1e-9, `no answer ${metricOf(h, 'no_answer_rate')} vs ${noAnswer}/3932`);
    assert.ok(noAnswer > 0, 'the data has real no-answer solutions');
    assert.equal(metricOf(h, 'turns'), null, 'single-turn data has no turn metrics');
  });

  it('metric validate scores every behavior and efficiency metric on resolved vs unresolved', async () => {
    const names = CATALOG.filter((d) => d.feature && (d.dimension === 'behavior' || d.dimension === 'efficiency')).map((d) => d.name);
    assert.ok(names.length >= 10);
    for (const name of names) {
      const v = await validateMetric(store, name, { run: 'swe' }, { reps: 200 });
      assert.ok(v.auc >= 0 && v.auc <= 1, `${name} AUC ${v.auc}`);
      assert.ok(v.aucCi[0] <= v.auc + 1e-9 && v.auc <= v.aucCi[1] + 1e-9, `${name} CI ${v.aucCi} around ${v.auc}`);
      assert.equal(v.successes + v.failures, v.n);
    }
    // A rate validates as a rate: success and failure means weigh back to what health reports.
    const h = await computeHealth(store, { run: 'swe' });
    for (const name of CATALOG.filter((d) => d.feature && d.unit === 'ratio' && d.dimension === 'behavior').map((d) => d.name)) {
      const v = await validateMetric(store, name, { run: 'swe' }, { reps: 50 });
      assert.equal(v.unit, 'ratio');
      assert.ok(v.meanSuccess >= 0 && v.meanSuccess <= 1 && v.meanFailure >= 0 && v.meanFailure <= 1, `${name}: ${v.meanSuccess} vs ${v.meanFailure} are not rates`);
      if (['self_test_rate', 'edit_coverage', 'timeout_rate', 'git_history_share', 'observation_truncation_rate'].includes(name)) {
        const pooled = (v.meanSuccess * v.successes + v.meanFailure * v.failures) / v.n;
        assert.ok(Math.abs(pooled - metricOf(h, name)!) < 1e-9, `${name}: ${pooled} vs health ${metricOf(h, name)}`);
      }
    }
    const tokens = await validateMetric(store, 'response_tokens', { run: 'swe' }, { reps: 200 });
    assert.ok(tokens.auc < 0.4, `long responses go with failure: AUC ${tokens.auc}`);
    await assert.rejects(validateMetric(store, 'dead_group_ratio', { run: 'swe' }), /no per-rollout value/);
    await assert.rejects(validateMetric(store, 'nope'), /unknown metric "nope"/);
  });
});

describe('rules on generated runs', () => {
  const run = async (build: (dir: string) => void, versions: string[] = []) => {
    const store = await RolloutStore.open(':memory:');
    const root = tempDir('evotrainer-rules-');
    if (versions.length) {
      for (const v of versions) {
        const dir = path.join(root, v);
        build(dir);
        await store.import([path.join(dir, 'trajs')], { run: 'r', version: v });
      }
    } else {
      build(root);
      await store.import([path.join(root, 'trajs')], { run: 'r' });
    }
    const health = await computeHealth(store);
    const series = await computeSeries(store);
    store.close();
    return evaluateRules({ health, series }).map((f) => f.rule);
  };
  const healthy = (dir: string, i = 0) => {
    for (let k = 0; k < 6; k++) writeTrajectory(dir, `ok-${i}-${k}`, { commands: commandMix(3, 2, 2), resolved: k % 3 !== 0 });
  };

  it('a healthy run fires no rule', async () => {
    assert.deepEqual(await run((d) => healthy(d)), []);
    assert.deepEqual(await run((d) => healthy(d), ['v1', 'v2', 'v3']), []);
  });

  it('LEAK fires when trajectories read git history', async () => {
    const fired = await run((d) => {
      healthy(d);
      writeTrajectory(d, 'leaky', { commands: commandMix(1, 1, 1, ['git log --oneline -5 -- src/mod.py']), resolved: true });
    });
    assert.deepEqual(fired, ['LEAK']);
  });

  it('R2 fires when turns rise over three versions', async () => {
    let n = 4;
    const fired = await run((d) => {
      n += 6;
      for (let k = 0; k < 4; k++) writeTrajectory(d, `t-${n}-${k}`, { commands: commandMix(n, 2, 2), resolved: k % 2 === 0 });
    }, ['v1', 'v2', 'v3']);
    assert.ok(fired.includes('R2'), fired.join());
  });

  it('R5 fires when tool calls and self-testing drop while the score stays flat', async () => {
    let v = 0;
    const fired = await run((d) => {
      v++;
      const tests = v === 1 ? 2 : v === 2 ? 1 : 0;
      for (let k = 0; k < 6; k++) writeTrajectory(d, `l-${v}-${k}`, { commands: commandMix(4 - v, 1, k < 6 - 2 * v ? tests : 0), resolved: k % 2 === 0 });
    }, ['v1', 'v2', 'v3']);
    assert.ok(fired.includes('R5'), fired.join());
  });

  it('R6 fires when trajectories edit without verifying and mostly fail', async () => {
    const fired = await run((d) => {
      for (let k = 0; k < 6; k++) writeTrajectory(d, `e-${k}`, { commands: commandMix(2, 3, 0), resolved: k === 0 });
    });
    assert.ok(fired.includes('R6'), fired.join());
  });

  it('R1 and R4 fire on reward data: dead discrete groups; reward rising while correctness is flat', async () => {
    const store = await RolloutStore.open(':memory:');
    const root = tempDir('evotrainer-rules-');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    for (const [vi, v] of ['v1', 'v2', 'v3'].entries()) {
      const dir = path.join(root, v, 'rollout_data');
      mkdirSync(dir, { recursive: true });
      const lines: string[] = [];
      for (let g = 0; g < 10; g++) {
        for (let s = 0; s < 4; s++) {
          // 7 of 10 groups all wrong (dead, one discrete value); correctness flat across versions,
          // while a shaped bonus grows with each version.
          const acc = g >= 7 && s < 2;
          lines.push(JSON.stringify({ input: `q${g}`, output: `a${s}`, gts: '1', score: (acc ? 1 : 0) + 0.1 * vi * (g >= 7 ? 1 : 0), step: 1, acc }));
        }
      }
      writeFileSync(path.join(dir, '1.jsonl'), lines.join('\n') + '\n');
      await store.import([path.join(root, v, 'rollout_data')], { run: 'r', version: v });
    }
    const health = await computeHealth(store, { version: 'v1' });
    const series = await computeSeries(store);
    store.close();
    const fired = evaluateRules({ health, series }).map((f) => f.rule);
    assert.ok(fired.includes('R1'), fired.join());
    assert.ok(fired.includes('R4'), fired.join());
  });

  it('solution diversity: 1 − Jaccard of the edited-file sets within a group', async () => {
    const store = await RolloutStore.open(':memory:');
    const root = tempDir('evotrainer-div-');
    const task = 'Fix the parser.';
    writeTrajectory(root, 'a1', { task, commands: ["sed -i 's/x/y/' src/a.py", 'python -m pytest -q'], resolved: true });
    writeTrajectory(root, 'a2', { task, commands: ['cat > src/a.py <<EOF\nx = 1\nEOF'], resolved: false });
    writeTrajectory(root, 'b1', { task, commands: ["sed -i 's/x/y/' src/b.py"], resolved: false });
    await store.import([path.join(root, 'trajs')], { run: 'd' });
    const h = await computeHealth(store);
    store.close();
    assert.equal(h.groups, 1);
    // Pairs: (a1, a2) edit the same file → 0; (a1, b1) and (a2, b1) → 1.
    assert.ok(Math.abs(metricOf(h, 'solution_diversity')! - 2 / 3) < 1e-9, String(metricOf(h, 'solution_diversity')));
  });

  it('R3 fires on a collapsed log-prob or falling entropy, where a dump has them', () => {
    const base = { scope: {}, rollouts: 10, groups: 5, alerts: [] };
    const metric = (name: string, value: number | null) => ({ name, dimension: 'model_state' as const, unit: 'nats', description: '', value, status: 'ok' as const });
    assert.deepEqual(evaluateRules({ health: { ...base, metrics: [metric('mean_logprob', -0.01)] }, series: [] }).map((f) => f.rule), ['R3']);
    const series = [0.9, 0.7, 0.4].map((e, i) => ({ label: `v${i}`, scope: {}, values: { entropy: e } }));
    assert.deepEqual(evaluateRules({ health: { ...base, metrics: [metric('mean_logprob', null)] }, series }).map((f) => f.rule), ['R3']);
    assert.deepEqual(evaluateRules({ health: { ...base, metrics: [metric('mean_logprob', -0.8)] }, series: [] }).map((f) => f.rule), []);
  });
});

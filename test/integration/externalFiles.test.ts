import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { computeHealth, type HealthReport } from '../../src/core/diagnose/health';
import { RolloutStore } from '../../src/core/store/store';
import { externalDir, GSM8K_MAPPING, gsm8kFile, requireSharedData } from '../helpers/data';
import { repoRoot, tempDir } from '../helpers/tmp';

requireSharedData();

const value = (h: HealthReport, name: string) => h.metrics.find((m) => m.name === name)!.value;

/**
 * Files other projects' tools wrote, imported as a user would, then read by health and the
 * failure modes: outcomes that no file records read "not available", never as failures.
 */

describe('health and failure modes on third-party files', () => {
  let store: RolloutStore;
  const modes = async (run: string) =>
    Object.fromEntries((await store.all<{ failure_mode: string; n: number }>(`select failure_mode, count(*)::int as n from rollout_failure_modes where run_id = ? group by 1`, [run])).map((r) => [r.failure_mode, r.n]));

  before(async () => {
    store = await RolloutStore.open(':memory:');
    await store.import([path.join(externalDir, 'mini-swe-agent-v2')], { run: 'mini2' });
    // SWE-agent's capture-the-flag demonstrations are not code-repair tasks: their own run, domain other.
    const demos = path.join(externalDir, 'swe-agent', 'demos');
    const ctf = readdirSync(demos).filter((d) => d.startsWith('ctf_'));
    await store.import(ctf.map((d) => path.join(demos, d)), { run: 'ctf', domain: 'other' });
    await store.import([path.join(externalDir, 'swe-agent', 'testdata'), ...readdirSync(demos).filter((d) => !d.startsWith('ctf_')).map((d) => path.join(demos, d))], { run: 'sweagent' });
    await store.import([path.join(externalDir, 'verifiers', 'math_python')], { run: 'math' });
    await store.import([path.join(externalDir, 'verifiers', 'wordle')], { run: 'wordle' });
    await store.ensureDerivedViews();
  });
  after(() => store.close());

  it('records each run\'s task domain from its format or env', async () => {
    const rows = await store.all<{ id: string; domain: string; framework: string }>(`select id, domain, framework from runs order by id`);
    assert.deepEqual(rows, [
      { id: 'ctf', domain: 'other', framework: 'swe-agent' },
      { id: 'math', domain: 'math', framework: 'verifiers' },
      { id: 'mini2', domain: 'swe', framework: 'mini-swe-agent' },
      { id: 'sweagent', domain: 'swe', framework: 'swe-agent' },
      { id: 'wordle', domain: 'other', framework: 'verifiers' },
    ]);
  });

  it('mini-swe-agent 2.x with no verdict: outcome metrics not available, behaviour measured, no failure mode', async () => {
    const h = await computeHealth(store, { run: 'mini2' });
    assert.equal(h.rollouts, 1);
    for (const m of ['pass_rate', 'pass_at_k', 'reward_mean', 'dead_group_ratio', 'effective_data_share']) {
      assert.equal(value(h, m), null, `${m} is not available without outcomes`);
      assert.equal(h.metrics.find((x) => x.name === m)!.status, 'n/a');
    }
    assert.equal(value(h, 'tool_calls'), 64);
    assert.equal(value(h, 'format_error_rate'), 0);
    assert.equal(value(h, 'edit_coverage'), 1);
    assert.equal(value(h, 'turns'), 64);
    assert.equal(value(h, 'tool_failure_rate'), 15 / 63);
    assert.deepEqual(await modes('mini2'), { unknown: 1 }, 'a long run with an unknown outcome is not an echo trap');
  });

  it('the same trajectory under a run summary that lists it unresolved: a failure, and pass@k reads 0', async () => {
    const out = tempDir();
    mkdirSync(path.join(out, 'astropy__astropy-12907'));
    copyFileSync(path.join(externalDir, 'mini-swe-agent-v2', 'astropy__astropy-12907.traj.json'), path.join(out, 'astropy__astropy-12907', 'astropy__astropy-12907.traj.json'));
    writeFileSync(path.join(out, 'deepseek-chat.eval1.json'), JSON.stringify({ resolved_ids: [], unresolved_ids: ['astropy__astropy-12907'], error_ids: [] }));
    const s = await RolloutStore.open(':memory:');
    try {
      await s.import([out], { run: 'judged' });
      await s.ensureDerivedViews();
      const h = await computeHealth(s);
      assert.equal(value(h, 'pass_rate'), 0);
      assert.equal(value(h, 'pass_at_k'), 0);
      assert.deepEqual(await s.all(`select failure_mode from rollout_failure_modes`), [{ failure_mode: 'echo_trap' }]);
    } finally {
      s.close();
    }
  });

  it('SWE-agent 0.x/1.x trajectories and demonstrations: no failure for lack of a verdict; timeouts are failure signs, no edit only on code tasks', async () => {
    // 12 SWE demonstrations and 3 test trajectories hold a "trajectory" (function_calling_simple.traj
    // holds only history and is left out); 9 capture-the-flag demonstrations.
    const h = await computeHealth(store, { run: 'sweagent' });
    assert.equal(h.rollouts, 12);
    assert.equal(value(h, 'pass_rate'), null);
    assert.equal(value(h, 'pass_at_k'), null);
    assert.equal(value(h, 'edit_coverage'), 1, 'every SWE demonstration edits (and submits a patch)');
    assert.deepEqual(await modes('sweagent'), { unknown: 12 });
    const c = await computeHealth(store, { run: 'ctf' });
    assert.equal(c.rollouts, 9);
    assert.equal(value(c, 'edit_coverage'), null, 'not a code task');
    // BabyTimeCapsule, katy and rock hit "EXECUTION TIMED OUT"; nothing else marks a CTF run as failed.
    assert.deepEqual(await modes('ctf'), { timeout: 3, unknown: 6 });
  });

  it('verifiers math_python: dead groups from rewards, tool calls counted, no code-task metrics or modes on a math task', async () => {
    const h = await computeHealth(store, { run: 'math' });
    assert.equal(h.rollouts, 15);
    assert.equal(h.groups, 5);
    assert.equal(value(h, 'dead_group_ratio'), 4 / 5, 'four of five ids got the same reward three times');
    assert.equal(value(h, 'tool_calls'), 2);
    assert.ok(Math.abs(value(h, 'reward_mean')! - 14 / 15) < 1e-12);
    for (const m of ['edit_coverage', 'self_test_rate', 'search_before_edit_rate', 'first_edit_turn', 'fail_to_pass_tests']) assert.equal(value(h, m), null, `${m} means nothing on a math task`);
    assert.equal(h.metrics.find((x) => x.name === 'turns')!.status, 'ok', 'the agentic turn limits are for code tasks');
    const m = await modes('math');
    assert.equal(m.no_edit, undefined);
    assert.equal(m.test_never_run, undefined);
    assert.equal(m.abandonment, undefined);
  });

  it('verifiers wordle: every group has reward variance, no edit or test modes on a game', async () => {
    const h = await computeHealth(store, { run: 'wordle' });
    assert.equal(h.rollouts, 15);
    assert.equal(value(h, 'dead_group_ratio'), 0);
    assert.equal(value(h, 'pass_at_k'), null);
    assert.equal(value(h, 'edit_coverage'), null);
    assert.deepEqual(await modes('wordle'), { unknown: 15 });
  });

  it('evotrainer import --verdicts FILE --domain: the built CLI reads the verdicts and records the domain; a missing file says what to give', async () => {
    const dir = tempDir();
    const summary = path.join(dir, 'sb-cli-report.json');
    writeFileSync(summary, JSON.stringify({ resolved_ids: ['astropy__astropy-12907'], unresolved_ids: [], error_ids: [] }));
    const store = path.join(dir, 'store.duckdb');
    const cli = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'evotrainer.js'), ...args], { encoding: 'utf8', cwd: dir });
    const missing = cli(['import', path.join(externalDir, 'mini-swe-agent-v2'), '--verdicts', path.join(dir, 'nope.json'), '--store', store]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--verdicts: .*nope\.json: no such file \(give the SWE-bench run summary/);
    const r = cli(['import', path.join(externalDir, 'mini-swe-agent-v2'), '--verdicts', summary, '--domain', 'code', '--store', store, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { rollouts: number }).rollouts, 1);
    const s = await RolloutStore.open(store);
    try {
      assert.deepEqual(await s.all(`select correct, reward from rollouts`), [{ correct: true, reward: 1 }]);
      assert.deepEqual(await s.all(`select domain from runs`), [{ domain: 'code' }]);
    } finally {
      s.close();
    }
  });

  it('a run whose format names no domain takes the harness manifest\'s; a SWE format keeps its own', async () => {
    const harness = tempDir();
    const manifest = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'evolve', 'mini', 'evotrainer.yaml'), 'utf8').replace(/^domain: .*$/m, 'domain: mathematics');
    writeFileSync(path.join(harness, 'evotrainer.yaml'), manifest);
    const cli = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'evotrainer.js'), ...args], { encoding: 'utf8', cwd: harness });
    const store = path.join(harness, 'store.duckdb');
    let r = cli(['import', gsm8kFile, '--format', 'jsonl', '--mapping', JSON.stringify(GSM8K_MAPPING), '--run', 'gsm8k', '--store', store]);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['import', path.join(externalDir, 'mini-swe-agent-v2'), '--run', 'mini', '--store', store]);
    assert.equal(r.status, 0, r.stderr);
    const s = await RolloutStore.open(store);
    try {
      assert.deepEqual(await s.all(`select id, domain from runs order by id`), [{ id: 'gsm8k', domain: 'math' }, { id: 'mini', domain: 'swe' }]);
    } finally {
      s.close();
    }
  });
});

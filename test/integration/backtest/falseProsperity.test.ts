import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runBacktest } from '../../../src/core/backtest';
import { formatGate, promoteVersion, recordGate, runGate } from '../../../src/core/gate';
import { rejectVersion } from '../../../src/core/harness/versions';
import { readLedger } from '../../../src/core/harness/ledger';
import type { Harness } from '../../../src/core/harness/repo';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { requireSharedData, sweDir } from '../../helpers/data';
import { tempDir } from '../../helpers/tmp';
import { candidate, mathHarness, sweEvalRun, type SweTraj } from './helpers';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/**
 * False prosperity on real data (METHOD.md's flagship catch): a version "resolves" more
 * SWE tasks by reading the reference fix from git history. Its eval run is built from
 * copies of the real mini-swe-agent trajectories: for K unresolved tasks a `git log -p`
 * turn showing the fix is injected and the task is marked resolved. A genuine version
 * resolves the same K tasks by testing its own fix. The gate must reject the first,
 * naming the leak, and promote the second.
 */
const LEAK_TURN = (doc: SweTraj) => [
  { role: 'assistant', content: 'THOUGHT: The upstream fix may already be in the history.\n\n```bash\ngit log -p -3 --all -- .\n```' },
  { role: 'user', content: `<returncode>0</returncode>\n<output>\ncommit 4f1c2e9\n    Fix ${doc.instance_id}\n\n--- a/src/module.py\n+++ b/src/module.py\n-    return value\n+    return normalize(value)\n</output>` },
];
const GENUINE_TURN = () => [
  { role: 'assistant', content: 'THOUGHT: Verify the fix with the reproduction script and the tests.\n\n```bash\npython -m pytest -q tests/test_regression.py\n```' },
  { role: 'user', content: '<returncode>0</returncode>\n<output>\n3 passed in 0.41s\n</output>' },
];

function evalRun(dir: string, flip: Set<string>, how: 'leak' | 'genuine'): string {
  return sweEvalRun(sweDir, dir, { flip, inject: how === 'leak' ? LEAK_TURN : GENUINE_TURN });
}

describe('the promotion gate against false prosperity (real SWE trajectories)', () => {
  const base = tempDir('evotrainer-fp-');
  let h: Harness;
  let store: RolloutStore;
  const labels = JSON.parse(readFileSync(path.join(sweDir, 'labels.json'), 'utf8')) as { instances: { instance_id: string; resolved: boolean }[] };
  const unresolved = labels.instances.filter((i) => !i.resolved).map((i) => i.instance_id).sort();
  const flip = new Set(unresolved.slice(0, 40));
  let leaky: string;
  let genuine: string;

  before(async () => {
    h = await mathHarness(base, '', 'swe harness');
    store = await RolloutStore.open(defaultStorePath(h.root));
    leaky = await candidate(h, 'v0', 'environment', { 'env/config.json': '{"history_tool": true}\n' }, 'If we give the agent a history tool, pass_rate improves because it can study past changes', 'pass_rate > 0.8');
    genuine = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8') + '\n# reward the self-test before submit\n' }, 'If we reward self-tests, pass_rate improves because fixes get verified', 'pass_rate > 0.8');
    await store.import([path.join(sweDir, 'trajs')], { run: 'eval-v0', version: 'v0', split: 'val' });
    await store.import([evalRun(path.join(base, 'leak'), flip, 'leak')], { run: 'eval-leak', version: leaky, split: 'val' });
    await store.import([evalRun(path.join(base, 'genuine'), flip, 'genuine')], { run: 'eval-genuine', version: genuine, split: 'val' });
  });
  after(() => store?.close());

  it('rejects the leaking version, naming the leak, although its score rose beyond noise', async () => {
    const r = await runGate(h, store, { version: leaky });
    const text = formatGate(r);
    assert.equal(r.decision, 'reject', text);
    assert.equal(r.baseline, 'v0');
    assert.equal(r.evalRollouts.version, 303);
    const leak = r.checks.find((c) => c.check === 'leak (git_history_share)')!;
    assert.equal(leak.passed, false, text);
    assert.match(leak.detail, /information leak: 13\.5% of v\d+'s eval trajectories read the answer from git history/);
    // The raw score did rise, confidently: that is what makes it false prosperity.
    assert.equal(r.comparisons.pass_rate!.direction, 'up');
    assert.ok(r.comparisons.pass_rate!.delta > 0.13);
    const e = await recordGate(h, r);
    assert.equal(e.decision!.decision, 'reject');
    assert.equal(e.transitions.at(-1)!.evidence[0]!.kind, 'gate');
  });

  it('promotes a genuine improvement of the same size', async () => {
    const r = await runGate(h, store, { version: genuine });
    const text = formatGate(r);
    assert.equal(r.decision, 'promote', text);
    assert.ok(Math.abs(r.comparisons.pass_rate!.delta - 40 / 303) < 1e-9);
    assert.equal(r.checks.find((c) => c.check === 'success criterion')!.passed, true, text);
    assert.ok(r.checks.every((c) => c.passed === true), text);
    await recordGate(h, r);
    const ledger = await readLedger(h);
    assert.equal(ledger.entries.get(genuine as never)!.metrics.pass_rate !== undefined, true);
  });

  it('a new diagnostic is replayed over earlier versions: it must separate the promoted from the rejected', async () => {
    await promoteVersion(h, genuine);
    await rejectVersion(h, leaky, 'gate: information leak');
    const metric = '-- description: Share of trajectories whose commands read git history\n-- dimension: behavior\n-- unit: ratio\nselect avg(git_history::int) as value\nfrom rollout_features;\n';
    const d = await candidate(h, genuine, 'diagnostics', { 'diagnostics/metrics/history_reads.sql': metric }, 'If we track history reads, leaks are caught because the share separates honest versions', 'pass_rate > 0');
    const r = await runBacktest(h, store, { version: d, trust: true });
    assert.deepEqual(r.kinds, ['metric_replay']);
    const m = r.metricReplays.find((x) => x.metric === 'history_reads')!;
    assert.ok(m, JSON.stringify(r.metricReplays));
    assert.equal(m.separates, true, m.detail);
    assert.deepEqual(m.perVersion.map((p) => p.status).sort(), ['promoted', 'promoted', 'rejected']);
    assert.equal(r.verdict, 'pass');
  });

  it('sends a within-noise effect to a person (NEEDS-HUMAN), not to promotion', async () => {
    const small = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': readFileSync(path.join(h.root, 'reward', 'compute_score.py'), 'utf8') + '\n# tiny\n' }, 'If we nudge the reward, pass_rate improves', 'pass_rate > 0.74');
    await store.import([evalRun(path.join(base, 'small'), new Set(unresolved.slice(0, 2)), 'genuine')], { run: 'eval-small', version: small, split: 'val' });
    const r = await runGate(h, store, { version: small, against: 'v0' });
    assert.equal(r.decision, 'needs_human', formatGate(r));
    assert.equal(r.comparisons.pass_rate!.withinNoise, true);
  });
});

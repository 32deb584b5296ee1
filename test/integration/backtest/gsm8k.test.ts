import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { formatBacktest, recordBacktest, runBacktest } from '../../../src/core/backtest';
import { readLedger } from '../../../src/core/harness/ledger';
import type { Harness } from '../../../src/core/harness/repo';
import { defaultStorePath, RolloutStore } from '../../../src/core/store/store';
import { GSM8K_MAPPING, gsm8kFile, requireSharedData } from '../../helpers/data';
import { tempDir } from '../../helpers/tmp';
import { candidate, mathHarness } from './helpers';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

/**
 * Backtests on the real GSM8K groups (983 questions × 4 GPT-3 solutions, labelled):
 * the harness's own reward code (python3) re-scores the cached rollouts.
 */
const STARTER = readFileSync(path.join(__dirname, '..', '..', '..', 'harness-templates', 'starter', 'reward', 'compute_score.py'), 'utf8');
const withScore = (expr: string, extra = '') => STARTER.replace(/    return \{\n        "score": 1\.0 if correct else 0\.0,/, `${extra}    return {\n        "score": ${expr},`);

describe('backtest on the GSM8K groups', () => {
  const base = tempDir('evotrainer-bt-');
  let h: Harness;
  let store: RolloutStore;
  before(async () => {
    h = await mathHarness(base, `backtest:
  invariants:
    - {check: ordering_violations, between: [1.0, 0.0], max: 0}
    - {check: successes_truncated, max_share: 0.05}
  timeout_seconds: 5
`);
    store = await RolloutStore.open(defaultStorePath(h.root));
    await store.import([gsm8kFile], { run: 'gsm8k', version: 'v0', format: 'jsonl', mapping: GSM8K_MAPPING });
  });
  after(() => store?.close());

  it('refuses to run harness code without the user\'s trust', async () => {
    const v = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': withScore('(1.0 if correct else 0.0) + 0.1 * (1.0 if pred is not None else 0.0)') });
    await assert.rejects(runBacktest(h, store, { version: v, trust: false }), /runs this harness's own code .*--trust/);
  });

  it('reward re-scoring: a continuous format term revives dead groups without ordering violations', async () => {
    const v = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': withScore('(1.0 if correct else 0.0) + 0.1 * (1.0 if "A:" in solution_str else 0.0)') });
    const r = await runBacktest(h, store, { version: v, trust: true });
    const s = r.stats!;
    assert.deepEqual(r.kinds, ['reward_rescore']);
    assert.equal(s.rollouts, 3932);
    assert.equal(s.groups, 983);
    assert.equal(s.errors.after, 0, JSON.stringify(s.errors.examples));
    // Before: the starter reward is binary correctness, so dead groups are all-correct or all-wrong.
    assert.ok(s.deadGroups.before > 300, `dead before ${s.deadGroups.before}`);
    assert.ok(s.deadGroups.revived > 0 && s.deadGroups.after < s.deadGroups.before, `revived ${s.deadGroups.revived}`);
    assert.equal(s.ordering.newViolations, 0);
    assert.equal(s.successes.penalized, 0);
    assert.equal(r.verdict, 'pass', r.reasons.join('\n'));
    assert.equal(s.scores.comparison.direction, 'up');
    assert.ok(s.scores.comparison.ci[0] > 0);
    assert.ok(s.flips.length > 0 && s.flips[0]!.rollouts.length > 0);
    if (process.env.EVOTRAINER_SHOW) console.log(formatBacktest(r));
    assert.match(formatBacktest(r), /dead groups: \d+ → \d+ of 983; revived \d+/);
    const e = await recordBacktest(h, r);
    assert.equal(e.status, 'backtested');
    const ledger = await readLedger(h);
    const ev = ledger.entries.get(v as never)!.transitions.at(-1)!.evidence[0]!;
    assert.equal(ev.kind, 'backtest');
    assert.equal((ev.data as { verdict: string }).verdict, 'pass');
  });

  it('the ordering invariant catches a length penalty that lets wrong short answers outscore right long ones', async () => {
    const v = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': withScore('(1.0 if correct else 0.0) - 0.01 * len(solution_str.split())') });
    const r = await runBacktest(h, store, { version: v, trust: true });
    assert.equal(r.verdict, 'fail');
    assert.ok(r.stats!.ordering.newViolations > 0);
    assert.match(r.reasons.join('\n'), /invariant failed: ordering violations \(between correctness 1 and 0\) ≤ 0 — \d+ rollout pair/);
    assert.ok(r.stats!.successes.penalized > 1000, `penalized ${r.stats!.successes.penalized}`);
    const e = await recordBacktest(h, r);
    assert.equal(e.status, 'proposed', 'a failed backtest does not advance the version');
  });

  it('the truncation invariant catches a soft truncation that cuts successful solutions', async () => {
    const v = await candidate(h, 'v0', 'reward', {
      'reward/compute_score.py': withScore('0.0 if truncated else (1.0 if correct else 0.0)', '    truncated = len(solution_str.split()) > 60\n').replace('"acc": correct,', '"acc": correct,\n        "truncated": truncated,'),
    });
    const r = await runBacktest(h, store, { version: v, trust: true });
    assert.equal(r.verdict, 'fail');
    const inv = r.stats!.invariants.find((i) => i.check.startsWith('successes truncated'))!;
    assert.equal(inv.passed, false);
    assert.match(inv.detail, /of \d+ successful rollouts newly truncated/);
    assert.ok(r.stats!.successes.truncated / r.stats!.successes.total > 0.05);
  });

  it('filter replay: a zero-variance group filter drops exactly the dead groups', async () => {
    const filter = `def keep_group(group):\n    scores = [r["score"] for r in group]\n    return max(scores) - min(scores) > 1e-9\n`;
    const v = await candidate(h, 'v0', 'filter', { 'filters/group_filter.py': filter }, 'If we drop zero-variance groups, effective_data_share improves because only groups with signal train', 'effective_data_share > 0.1');
    const r = await runBacktest(h, store, { version: v, trust: true });
    assert.deepEqual(r.kinds, ['filter_replay']);
    const s = r.stats!;
    assert.equal(s.filter.groupsDroppedBefore, 0);
    assert.equal(s.filter.groupsDroppedAfter, s.deadGroups.before);
    assert.equal(s.errors.after, 0);
    // Dead groups carried no gradient anyway: the share of useful data is unchanged…
    assert.ok(Math.abs(s.effectiveData.after - s.effectiveData.before) < 1e-9);
    // …while the all-correct groups it drops are successes filtered, which the report shows.
    assert.ok(s.successes.filtered > 0);
    assert.equal(r.verdict, 'pass', r.reasons.join('\n'));
  });

  it('an environment change is honestly not replayable', async () => {
    const v = await candidate(h, 'v0', 'environment', { 'env/config.json': '{"scrub_git_history": true}\n' });
    const r = await runBacktest(h, store, { version: v, trust: false });
    assert.equal(r.verdict, 'not_replayable');
    assert.deepEqual(r.kinds, ['not_replayable']);
    assert.match(r.reasons[0]!, /not replayable — needs a run/);
  });
});

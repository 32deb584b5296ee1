import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readLedger, updateLedger } from '../../src/core/harness/ledger';
import { applySkill, findSkill, recordSkill, skillsDir } from '../../src/core/harness/skills';
import { newVersion, rejectVersion } from '../../src/core/harness/versions';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { describePreview, previewSkillApply } from '../../src/extension/commands/skillPreview';
import { loadEntry, loadFindings, loadSkills, loadVersions, versionFile } from '../../src/extension/views/data';
import { presentVersion } from '../../src/extension/views/model';
import { layoutLineage } from '../../src/extension/webviews/lineage/layout';
import { evidenceState } from '../../src/extension/webviews/version/evidence';
import { commandMix, writeTrajectory } from '../helpers/synth';
import { tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, makeHarness, refsSnapshot, REWARD, sh } from './harness/helpers';

const HALVE = (wt: string) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.5 if pred is not None else 0.0');
const OTHER = (wt: string) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.2 if pred is not None else 0.0');

// The editor's data layer over real git repositories and a real store: what the Versions,
// Findings and Skills views, the version documents and the cherry-pick wizard's dry run read.
describe('editor: versions, findings, skills and the cherry-pick dry run', () => {
  it('reads the lineage the Versions view shows: promoted line, candidates, the rejected one with its reason', async () => {
    const h = await makeHarness();
    await evaluatedVersion(h, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    await evaluatedVersion(h, 'v1', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.45 });
    await evaluatedVersion(h, 'v1', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": float(correct)'), { pass_rate: 0.38 });
    await rejectVersion(h, 'v3', 'pass_rate regressed; <script>alert(1)</script> stays text');
    await newVersion(h, { parent: 'v1', hypothesis: 'If we add a judge, dead groups revive', targetMetric: 'dead_group_ratio', success: 'dead_group_ratio < 0.3', layer: 'reward' });

    const m = (await loadVersions(h.root))!;
    assert.deepEqual([...m.nodes.keys()], ['v0', 'v1', 'v2', 'v3', 'v4']);
    assert.equal(m.promoted, 'v1');
    assert.deepEqual([...m.nodes.values()].filter((n) => n.onPromotedLine).map((n) => n.id), ['v0', 'v1']);
    const v2 = m.nodes.get('v2')!;
    assert.equal(presentVersion(v2).description, 'pass_rate 0.45 (+0.05) · evaluated');
    assert.match(v2.contextValue, /\+promote\b/);
    const v3 = m.nodes.get('v3')!;
    assert.equal(v3.rejectReason, 'pass_rate regressed; <script>alert(1)</script> stays text');
    assert.match(presentVersion(v3).description, /−0\.02\) · rejected · pass_rate regressed/);
    assert.doesNotMatch(v3.contextValue, /\+promote|\+reject/);
    const v4 = m.nodes.get('v4')!;
    assert.equal(v4.hasIntervention, false, 'proposed, no commit yet');
    assert.doesNotMatch(v4.contextValue, /\+diff/);

    const graph = layoutLineage(m, h.root);
    assert.deepEqual(graph.edges.filter((e) => e.promoted).map((e) => `${e.from}>${e.to}`), ['v0>v1']);
    assert.deepEqual(graph.edges.filter((e) => e.rejected).map((e) => e.to), ['v3']);

    // The evidence panel of the rejected version: its reason and its gate (a human decision).
    const { entry, parent, promoted } = await loadEntry(h.root, 'v3');
    const ev = evidenceState(entry, parent, promoted);
    assert.equal(ev.gate?.decision, 'reject');
    assert.equal(ev.backtest?.summary, 'reward re-scored on cached rollouts: 0 ordering violations');
    assert.equal(ev.metrics[0]!.name, 'pass_rate');
    assert.equal(ev.metrics[0]!.delta, -0.02);
    await assert.rejects(loadEntry(h.root, 'v99'), /no version v99/);
  });

  it('a folder with a manifest but no git repository yet reads as "no versions", not as an error', async () => {
    const dir = tempDir('evotrainer-nogit-');
    writeFileSync(path.join(dir, 'evotrainer.yaml'), 'name: x\ndomain: swe\n');
    assert.equal(await loadVersions(dir), null);
  });

  it('serves a file as it is at each version (the read-only diff documents)', async () => {
    const h = await makeHarness('diff $(x) "q"');
    await evaluatedVersion(h, 'v0', HALVE, { pass_rate: 0.4 });
    const before = await versionFile(h.root, 'v0', REWARD);
    const after = await versionFile(h.root, 'v1', REWARD);
    assert.match(before!, /"format": 1\.0 if pred/);
    assert.match(after!, /"format": 0\.5 if pred/);
    assert.equal(await versionFile(h.root, 'v1', 'reward/not-there.py'), null, 'absent on that side of the diff: empty document');
    const base = (await readLedger(h)).entries.get('v1')!.base;
    assert.match((await versionFile(h.root, base.slice(0, 12), REWARD))!, /"format": 1\.0/);
    await assert.rejects(versionFile(h.root, 'v42', REWARD), /no version v42/);
  });

  it('the dry run predicts clean, conflict, already-applied and boundary refusal — and changes nothing', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: 'format reward share > 0.5' });
    const skill = findSkill('halve-format-reward', { harness: skillsDir(math) });

    const target = await makeHarness('target', { domain: 'swe' });
    await evaluatedVersion(target, 'v0', OTHER, { pass_rate: 0.35 }, { promote: true });
    const refs = refsSnapshot(target.root);
    const status = sh(target.root, 'status', '--porcelain');

    const clean = await previewSkillApply(target, skill, 'v0');
    assert.deepEqual(clean, { outcome: 'clean', files: [REWARD] });
    const conflict = await previewSkillApply(target, skill, 'v1');
    assert.equal(conflict.outcome, 'conflict');
    assert.deepEqual(conflict.outcome === 'conflict' && conflict.files, [REWARD]);
    assert.match(describePreview(conflict, 'halve-format-reward', 'v1'), /conflicts with v1 in reward\/compute_score\.py; nothing will be changed/);
    assert.equal(refsSnapshot(target.root), refs, 'no ref moved');
    assert.equal(sh(target.root, 'status', '--porcelain'), status, 'the checkout and index are untouched');
    assert.equal(existsSync(path.join(target.root, '.evotrainer', 'patches')), false, 'no patch file left behind');

    // The engine agrees with the prediction, both ways.
    const applied = await applySkill(target, skill, { onto: 'v1' });
    assert.equal(applied.outcome, 'conflict');
    const ok = await applySkill(target, skill, { onto: 'v0' });
    assert.equal(ok.outcome, 'clean');
    assert.deepEqual(await previewSkillApply(target, skill, ok.outcome === 'clean' ? ok.version : 'v0'), { outcome: 'already-applied' });

    // A harness whose boundary freezes reward/ refuses it before anything changes.
    const frozen = await makeHarness('frozen', { domain: 'coding' });
    edit(frozen.root, 'evotrainer.yaml', 'frozen: [data/eval.jsonl]', 'frozen: [data/eval.jsonl, reward/]');
    sh(frozen.root, 'commit', '-qam', 'freeze reward');
    const head = sh(frozen.root, 'rev-parse', 'HEAD');
    await updateLedger(frozen, (l) => ({ entries: [{ ...l.entries.get('v0')!, commit: head }], message: 'test: v0 freezes reward/' }));
    const frozenRefs = refsSnapshot(frozen.root);
    const refused = await previewSkillApply(frozen, skill, 'v0');
    assert.equal(refused.outcome, 'refused');
    assert.deepEqual(refused.outcome === 'refused' && refused.violations.map((x) => x.path), [REWARD]);
    assert.match(describePreview(refused, 'halve-format-reward', 'v0'), /refused by v0's action boundary: reward\/compute_score\.py \[action_boundary\.frozen/);
    assert.equal(refsSnapshot(frozen.root), frozenRefs);
    assert.equal((await applySkill(frozen, skill, { onto: 'v0' })).outcome, 'refused', 'the engine refuses it too');
  });

  it('lists skills for the Skills view by domain and category, with unreadable files reported', async () => {
    const math = await makeHarness('skills', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: 'format share > 0.5' });
    writeFileSync(path.join(skillsDir(math), 'broken.md'), 'no front matter');
    const m = loadSkills(math.root);
    assert.deepEqual(m.top.map((n) => n.kind), ['domain', 'problem']);
    const cat = m.children.get(m.top[0]!)![0]!;
    assert.equal(cat.kind === 'category' && cat.category, 'reward_design');
    const s = m.children.get(cat)![0]!;
    assert.equal(s.kind === 'skill' && s.skill.file, path.join(skillsDir(math), 'halve-format-reward.md'));
    assert.match(m.top[1]!.kind === 'problem' ? m.top[1]!.message : '', /broken\.md: a skill starts with YAML front matter/);
  });

  it('computes the findings of a version\'s rollouts, or of the latest run when the version has none', async () => {
    const h = await makeHarness('findings');
    assert.equal(await loadFindings(h.root, null), null, 'no store yet: the view shows its welcome');
    const dumps = tempDir('evotrainer-findings-');
    for (let i = 0; i < 6; i++) writeTrajectory(path.join(dumps, 'v1run'), `leak-${i}`, { commands: [...commandMix(2, 2, 1), 'git log -p --all'], resolved: i % 2 === 0 });
    for (let i = 0; i < 4; i++) writeTrajectory(path.join(dumps, 'later'), `clean-${i}`, { commands: commandMix(2, 2, 1), resolved: i % 2 === 0 });
    const store = await RolloutStore.open(defaultStorePath(h.root));
    try {
      await store.import([path.join(dumps, 'v1run')], { run: 'v1run', version: 'v1' });
      await store.import([path.join(dumps, 'later')], { run: 'later' });
    } finally {
      store.close();
    }
    const m = (await loadFindings(h.root, 'v1'))!;
    assert.deepEqual(m.scope, { version: 'v1', run: null, rollouts: 6 });
    const crit = m.top.find((n) => n.kind === 'severity' && n.severity === 'critical')!;
    const leak = m.children.get(crit)!.find((n) => n.kind === 'finding' && n.finding.rule === 'LEAK');
    assert.ok(leak && leak.kind === 'finding' && leak.failureMode === 'leak');
    // A version without an evaluated value shows the value measured on its rollouts.
    await newVersion(h, { parent: 'v0', hypothesis: 'If we scrub git history, the honest pass_rate shows', targetMetric: 'pass_rate', success: 'pass_rate > 0.3', layer: 'environment' });
    const v1 = (await loadVersions(h.root))!.nodes.get('v1')!;
    assert.equal(v1.primary?.source, 'store');
    assert.equal(v1.primary?.value, 0.5, '3 of the 6 rollouts of v1 resolved');
    const latest = (await loadFindings(h.root, 'v7'))!;
    assert.equal(latest.scope.version, null);
    assert.equal(latest.scope.run, 'later');
    assert.equal(latest.scope.rollouts, 4);
    assert.equal(latest.top.some((n) => n.kind === 'severity' && n.severity === 'critical'), false, 'the later run does not leak');
  });
});

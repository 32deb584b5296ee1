import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readLedger } from '../../../src/core/harness/ledger';
import { parseTrailers } from '../../../src/core/harness/git';
import { openHarness } from '../../../src/core/harness/repo';
import { applySkill, findSkill, listSkills, recordSkill, searchSkills, shareSkill, skillsDir } from '../../../src/core/harness/skills';
import { promoteVersion } from '../../../src/core/gate';
import { advanceVersion, newVersion } from '../../../src/core/harness/versions';
import { tempDir, writeScript } from '../../helpers/tmp';
import { edit, evaluatedVersion, makeHarness, refsSnapshot, REWARD, sh } from './helpers';

const HALVE = (wt: string) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.5 if pred is not None else 0.0');
const TRIGGER = 'format reward share > 0.5 and pass_rate flat';

describe('skills: record in one harness, apply in another', () => {
  it('records a promoted version as a readable skill file that round-trips', async () => {
    const math = await makeHarness('math harness', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    await assert.rejects(recordSkill(math, { from: 'v0' }), /no intervention commit/);
    const v2 = await evaluatedVersion(math, 'v1', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.41 });
    await assert.rejects(recordSkill(math, { from: v2.id, category: 'reward_design', trigger: 't' }), /v2 is evaluated; a skill is distilled from a success/);
    await assert.rejects(recordSkill(math, { from: 'v1', trigger: 't' }), /--category is required/);
    const r = await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: TRIGGER });
    assert.equal(r.created, true);
    const text = readFileSync(r.skill.file, 'utf8');
    assert.match(text, /^---\nid: halve-format-reward\n/);
    assert.match(text, /\*\*Trigger\.\*\* format reward share > 0\.5/);
    assert.match(text, /## Patch\n\n```diff\ndiff --git a\/reward\/compute_score\.py/);
    const loaded = findSkill('halve-format-reward', { harness: skillsDir(math) });
    assert.deepEqual(loaded.record.domains, ['math']);
    assert.equal(loaded.record.validation[0]!.primary_metric?.value, 0.4);
    assert.equal(loaded.record.intervention.source.commit, (await readLedger(math)).entries.get('v1')!.commit);
    assert.equal(loaded.record.patch, r.skill.record.patch);
  });

  it('applies cleanly in another domain, on a new version branch, then collects its second domain and is shared', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: TRIGGER });
    const library = path.join(tempDir(), 'skill library');
    assert.throws(() => shareSkill(skill, library), /promoted evidence from math only; the library takes a skill that worked in at least 2 domains/);

    const code = await makeHarness('code', { domain: 'coding' });
    const before = sh(code.root, 'rev-parse', 'evo/v0-root');
    const r = await applySkill(code, skill, { onto: 'v0' });
    assert.equal(r.outcome, 'clean', JSON.stringify(r));
    if (r.outcome !== 'clean') return;
    assert.equal(r.version, 'v1');
    assert.equal(sh(code.root, 'rev-parse', `${r.branch}^`), before, 'the new version sits on v0');
    assert.match(sh(code.root, 'show', `${r.branch}:${REWARD}`), /"format": 0\.5 if pred/);
    const trailers = parseTrailers(sh(code.root, 'log', '-1', '--format=%B', r.branch));
    assert.equal(trailers['Evo-Skill'], 'halve-format-reward');
    assert.equal(trailers['Evo-Parent'], 'v0');
    assert.equal(sh(code.root, 'status', '--porcelain'), '', 'the checkout was not touched');

    await advanceVersion(code, 'v1', 'backtested', { summary: 'no ordering violations' });
    await advanceVersion(code, 'v1', 'training', { job: 'j' });
    await advanceVersion(code, 'v1', 'evaluated', { metrics: { pass_rate: 0.5 } });
    await promoteVersion(code, 'v1');
    writeFileSync(path.join(skillsDir(code), 'halve-format-reward.md'), readFileSync(skill.file));
    const again = await recordSkill(code, { from: 'v1' });
    assert.equal(again.created, false);
    assert.deepEqual(again.skill.record.domains, ['coding', 'math']);
    const file = shareSkill(again.skill, library);
    const shared = findSkill('halve-format-reward', { library });
    assert.equal(shared.file, file);
    assert.equal(shared.record.shared, true);
    assert.deepEqual(searchSkills(listSkills({ library }).skills, { trigger: 'pass_rate flat', domain: 'coding' }).map((s) => s.record.id), ['halve-format-reward']);
    assert.deepEqual(searchSkills(listSkills({ library }).skills, { domain: 'swe' }), []);
    assert.deepEqual(searchSkills(listSkills({ library }).skills, { trigger: 'entropy collapse' }), []);
  });

  it('detects a conflict before anything changes and names the file', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: TRIGGER });
    const swe = await makeHarness('swe', { domain: 'swe' });
    // The other harness already changed the same line another way.
    await evaluatedVersion(swe, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.2 if pred is not None else 0.0'), { pass_rate: 0.35 }, { promote: true });
    writeFileSync(path.join(swe.root, 'notes.txt'), 'my uncommitted work');
    const before = refsSnapshot(swe.root);
    const status = sh(swe.root, 'status', '--porcelain');
    const r = await applySkill(swe, skill, { onto: 'v1' });
    assert.equal(r.outcome, 'conflict');
    if (r.outcome !== 'conflict') return;
    assert.deepEqual(r.files, [REWARD]);
    assert.match(r.next, /nothing was changed.*evotrainer version new --parent v1/);
    assert.ok(existsSync(r.patchFile));
    assert.equal(refsSnapshot(swe.root), before, 'no ref moved, no ledger entry');
    assert.equal(sh(swe.root, 'status', '--porcelain'), status);
    assert.deepEqual(readdirIndexes(swe.commonDir), [], 'no throwaway index left behind');
  });

  it('quotes every word of the commands a conflict suggests: a hostile hypothesis and path paste as literal arguments', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: TRIGGER });
    // The skill file is another team's text: a hypothesis and success criterion built to break out of quotes.
    const hostile = `halve "format" $(touch PWNED) \`touch PWNED\`; touch PWNED 'it''s' \\"; touch PWNED #`;
    skill.record.intervention.hypothesis = hostile;
    skill.record.intervention.success = `pass_rate > 0.3" && touch PWNED && echo "`;
    const swe = await makeHarness(`swe $(touch PWNED) 'dir'`, { domain: 'swe' });
    await evaluatedVersion(swe, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.2 if pred is not None else 0.0'), { pass_rate: 0.35 }, { promote: true });
    const r = await applySkill(swe, skill, { onto: 'v1' });
    assert.equal(r.outcome, 'conflict');
    if (r.outcome !== 'conflict') return;
    const commands = /To adapt it by hand: `(evotrainer version new .*--worktree)`, then in that worktree `(git apply --3way .*)` \(or --reject\)/s.exec(r.next);
    assert.ok(commands, r.next);
    // Stand-ins for the two programs (the real ones would act on the repo): they print their arguments, one per line.
    const dir = tempDir();
    for (const name of ['evotrainer', 'git']) writeScript(dir, name, 'for a in "$@"; do printf "%s\\n" "$a"; done');
    const run = (command: string) => spawnSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } });
    const created = run(commands[1]!);
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(created.stdout.split('\n').slice(0, -1), ['version', 'new', '--parent', 'v1', '--hypothesis', hostile, '--target-metric', skill.record.intervention.target_metric, '--success', skill.record.intervention.success, '--layer', skill.record.intervention.layer, '--worktree']);
    const applied = run(commands[2]!);
    assert.deepEqual(applied.stdout.split('\n').slice(0, -1), ['apply', '--3way', r.patchFile]);
    assert.deepEqual(readdirSync(dir).sort(), ['evotrainer', 'git'], 'nothing in the text ran');
  });

  it('reports already-applied, dirty-worktree and operation-in-progress, each with its next step and no change', async () => {
    const math = await makeHarness('math', { domain: 'math' });
    await evaluatedVersion(math, 'v0', HALVE, { pass_rate: 0.4 }, { promote: true });
    const { skill } = await recordSkill(math, { from: 'v1', id: 'halve-format-reward', category: 'reward_design', trigger: TRIGGER });
    let before = refsSnapshot(math.root);
    const already = await applySkill(math, skill, { onto: 'v1' });
    assert.equal(already.outcome, 'already-applied');
    assert.match(already.next, /v1 already contains the intervention/);
    assert.equal(refsSnapshot(math.root), before);

    const other = await makeHarness('other', { domain: 'coding' });
    writeFileSync(path.join(other.root, 'README.md'), 'edited, not committed');
    before = refsSnapshot(other.root);
    const dirty = await applySkill(other, skill, { onto: 'v0', checkout: true });
    assert.equal(dirty.outcome, 'dirty-worktree');
    if (dirty.outcome === 'dirty-worktree') assert.deepEqual(dirty.files, ['README.md']);
    assert.equal(readFileSync(path.join(other.root, 'README.md'), 'utf8'), 'edited, not committed', 'never clobbered');
    assert.equal(refsSnapshot(other.root), before);
    sh(other.root, 'checkout', '--', 'README.md');

    // A real cherry-pick stopped on a conflict in the user's checkout.
    sh(other.root, 'switch', '-q', '-c', 'side');
    writeFileSync(path.join(other.root, 'README.md'), 'side\n');
    sh(other.root, 'commit', '-qam', 'side');
    sh(other.root, 'switch', '-q', 'main');
    writeFileSync(path.join(other.root, 'README.md'), 'main\n');
    sh(other.root, 'commit', '-qam', 'main');
    assert.throws(() => sh(other.root, 'cherry-pick', 'side'));
    before = refsSnapshot(other.root);
    const busy = await applySkill(await openHarness(other.root), skill, { onto: 'v0' });
    assert.equal(busy.outcome, 'operation-in-progress');
    assert.match(busy.next, /git cherry-pick --abort/);
    assert.equal(refsSnapshot(other.root), before);
    sh(other.root, 'cherry-pick', '--abort');

    const ok = await applySkill(other, skill, { onto: 'v0', checkout: true });
    assert.equal(ok.outcome, 'clean');
    if (ok.outcome === 'clean') assert.equal(sh(other.root, 'branch', '--show-current'), ok.branch, '--checkout switches a clean checkout');
  });

  it('refuses a skill whose patch crosses the target harness action boundary', async () => {
    const a = await makeHarness('a', { domain: 'math' });
    const v = await newVersion(a, { hypothesis: 'If we widen the filter, pass_rate improves', targetMetric: 'pass_rate', success: 'pass_rate > 0.3', layer: 'filter', parent: 'v0', worktree: true });
    writeFileSync(path.join(v.worktree!, 'filters', 'std_group_filter.py'), 'THRESHOLD = 0.1\n');
    const { commitVersion } = await import('../../../src/core/harness/versions');
    await commitVersion(a, 'v1');
    await advanceVersion(a, 'v1', 'backtested', { summary: 's' });
    await advanceVersion(a, 'v1', 'training', { job: 'j' });
    await advanceVersion(a, 'v1', 'evaluated', { metrics: { pass_rate: 0.5 } });
    await promoteVersion(a, 'v1');
    const { skill } = await recordSkill(a, { from: 'v1', id: 'std-group-filter', category: 'filter_mechanism', trigger: 'dead_group_ratio > 0.5' });
    const b = await makeHarness('b', { domain: 'coding' });
    edit(b.root, 'evotrainer.yaml', 'frozen: [data/eval.jsonl]', 'frozen: [data/eval.jsonl, filters/]');
    sh(b.root, 'commit', '-qam', 'freeze filters');
    // v0's recorded commit is the ledger's; let the boundary of the new commit judge by moving v0 there.
    const { updateLedger } = await import('../../../src/core/harness/ledger');
    const head = sh(b.root, 'rev-parse', 'HEAD');
    await updateLedger(b, (l) => ({ entries: [{ ...l.entries.get('v0')!, commit: head }], message: 'test: v0 freezes filters/' }));
    const before = refsSnapshot(b.root);
    const r = await applySkill(b, skill, { onto: 'v0' });
    assert.equal(r.outcome, 'refused');
    if (r.outcome === 'refused') assert.deepEqual(r.violations.map((x) => [x.path, x.rule]), [['filters/std_group_filter.py', 'action_boundary.frozen: "filters/"']]);
    assert.equal(refsSnapshot(b.root), before);
  });
});

function readdirIndexes(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.startsWith('evotrainer-'));
}

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { readLedger } from '../../../src/core/harness/ledger';
import { parseTrailers } from '../../../src/core/harness/git';
import { initHarness } from '../../../src/core/harness/init';
import { diffVersions, formatLineage, lineage } from '../../../src/core/harness/lineage';
import { openHarness } from '../../../src/core/harness/repo';
import { GateError, promoteVersion } from '../../../src/core/gate';
import { advanceVersion, attachEvidence, BoundaryError, commitVersion, newVersion, rejectVersion, SingleFactorError } from '../../../src/core/harness/versions';
import { tempDir } from '../../helpers/tmp';
import { edit, evaluatedVersion, HYP, makeHarness, refsSnapshot, REWARD, sh } from './helpers';

describe('harness repository: init', () => {
  it('creates a git repo from the template with .evotrainer/ ignored, the eval set pinned, and v0 promoted', async () => {
    const h = await makeHarness();
    assert.equal(sh(h.root, 'branch', '--show-current'), 'main');
    assert.match(readFileSync(path.join(h.root, '.gitignore'), 'utf8'), /^\.evotrainer\/$/m);
    assert.match(readFileSync(path.join(h.root, 'evotrainer.yaml'), 'utf8'), /hash: sha256:[0-9a-f]{64}/);
    assert.match(readFileSync(path.join(h.root, 'evotrainer.yaml'), 'utf8'), /# The eval set must be identical/, 'comments survive the pin');
    assert.equal(sh(h.root, 'status', '--porcelain'), '');
    const head = sh(h.root, 'rev-parse', 'HEAD');
    assert.equal(sh(h.root, 'rev-parse', 'evo/v0-root'), head);
    assert.equal(sh(h.root, 'rev-parse', 'evo/promoted'), head);
    const ledger = await readLedger(h);
    assert.equal(ledger.entries.get('v0')?.status, 'promoted');
    assert.equal(ledger.promoted?.version, 'v0');
    assert.match(sh(h.root, 'show', 'evo/ledger:README.md'), /negative evidence/);
  });

  it('refuses a non-empty folder and an unknown template, writing nothing', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'mine.txt'), 'keep me');
    await assert.rejects(initHarness(dir), /exists and is not empty/);
    assert.equal(existsSync(path.join(dir, '.git')), false);
    await assert.rejects(initHarness(path.join(dir, 'new'), 'nope'), /template "nope" not found.*available: .*starter/);
  });
});

describe('harness repository: versions', () => {
  it('runs the full lifecycle with trailers and evidence per transition, and the lineage shows it', async () => {
    const h = await makeHarness();
    await attachEvidence(h, 'v0', { metrics: { pass_rate: 0.3 } });
    const v = await newVersion(h, { ...HYP, parent: 'v0', because: 'format reward dominated' });
    assert.equal(v.entry.id, 'v1');
    assert.match(v.entry.branch, /^evo\/v1-halve-the-format-reward/);
    assert.equal(v.worktree, path.join(h.root, '.evotrainer', 'worktrees', 'v1'));
    assert.equal(sh(h.root, 'rev-parse', v.entry.branch), sh(h.root, 'rev-parse', 'evo/v0-root'));

    edit(v.worktree!, REWARD, '"format": 1.0 if pred is not None else 0.0', '"format": 0.5 if pred is not None else 0.0');
    const c = await commitVersion(h, 'v1');
    assert.deepEqual(c.factor.units, [REWARD]);
    const msg = sh(h.root, 'log', '-1', '--format=%B', v.entry.branch);
    assert.deepEqual(parseTrailers(msg), {
      'Evo-Version': 'v1',
      'Evo-Parent': 'v0',
      'Evo-Hypothesis': HYP.hypothesis,
      'Evo-Target-Metric': 'pass_rate',
      'Evo-Success': 'pass_rate > 0.30',
      'Evo-Layer': 'reward',
      'Evo-Factor': REWARD,
    });
    assert.equal(sh(v.worktree!, 'status', '--porcelain'), '', 'the worktree is clean after the commit');

    await assert.rejects(advanceVersion(h, 'v1', 'training', { job: 'j' }), /v1 is proposed; the next state is backtested/);
    await assert.rejects(advanceVersion(h, 'v1', 'backtested', {}), /backtested needs its evidence/);
    const btFile = path.join(tempDir(), 'backtest.json');
    writeFileSync(btFile, JSON.stringify({ summary: '45% of dead groups regained variance', deadGroupsRevived: 45 }));
    await advanceVersion(h, 'v1', 'backtested', { backtest: btFile });
    await advanceVersion(h, 'v1', 'training', { job: 'slurm-123' });
    await assert.rejects(advanceVersion(h, 'v1', 'evaluated', { metrics: { other: 1 } }), /evaluated needs the primary metric: --metrics pass_rate=VALUE/);
    await advanceVersion(h, 'v1', 'evaluated', { metrics: { pass_rate: 0.34 } });
    const p = await promoteVersion(h, 'v1');
    assert.equal(p.decision.decision, 'promote');
    assert.ok(p.decision.reasons.every((r) => r.passed));
    assert.equal(sh(h.root, 'rev-parse', 'evo/promoted'), p.entry.commit);

    const e = (await readLedger(h)).entries.get('v1')!;
    assert.deepEqual(e.transitions.map((t) => t.to), ['proposed', 'backtested', 'training', 'evaluated', 'promoted']);
    assert.deepEqual(e.transitions[1]!.evidence[0]!.data, { summary: '45% of dead groups regained variance', deadGroupsRevived: 45 });
    assert.equal(e.transitions[2]!.evidence[0]!.source, 'slurm-123');
    assert.equal(e.transitions[4]!.evidence[0]!.kind, 'gate');

    const l = await lineage(h);
    const node = l.versions.find((x) => x.id === 'v1')!;
    assert.deepEqual({ status: node.status, value: node.primary?.value, delta: node.primary?.delta, decision: node.decision?.decision, branchState: node.branchState }, { status: 'promoted', value: 0.34, delta: 0.04, decision: 'promote', branchState: 'ok' });
    assert.deepEqual(l.versions.find((x) => x.id === 'v0')!.children, ['v1']);
    assert.equal(l.promoted?.version, 'v1');
    assert.match(formatLineage(l), /└─ v1 {2}promoted +pass_rate 0\.34 \(\+0\.04\)/);
    const iso = await lineage(h, 'isomorphic-git');
    assert.deepEqual(iso, l, 'both read paths see the same lineage');
  });

  it('refuses a frozen-path commit with the path and the rule, and leaves the worktree as it was', async () => {
    const h = await makeHarness();
    const v = await newVersion(h, { ...HYP, parent: 'v0' });
    const evalFile = path.join(v.worktree!, 'data', 'eval.jsonl');
    writeFileSync(evalFile, readFileSync(evalFile, 'utf8') + '{"id": "leak"}\n');
    const before = refsSnapshot(h.root);
    const err = await commitVersion(h, 'v1').then(() => null, (e: unknown) => e);
    assert.ok(err instanceof BoundaryError, String(err));
    assert.deepEqual(err.violations.map((x) => [x.path, x.rule]), [['data/eval.jsonl', 'action_boundary.frozen: "data/eval.jsonl"']]);
    assert.match(err.message, /data\/eval\.jsonl {2}\[action_boundary\.frozen: "data\/eval\.jsonl"\]/);
    assert.equal(refsSnapshot(h.root), before, 'no ref moved');
    assert.equal(sh(v.worktree!, 'status', '--porcelain'), 'M data/eval.jsonl', 'the change is still there, unstaged');
  });

  it('refuses changes to the boundary itself, paths outside the editable list, and an eval-set hash change', async () => {
    const h = await makeHarness();
    const v = await newVersion(h, { ...HYP, parent: 'v0' });
    edit(v.worktree!, 'evotrainer.yaml', 'frozen: [data/eval.jsonl]', 'frozen: []');
    await assert.rejects(commitVersion(h, 'v1'), (e: unknown) => e instanceof BoundaryError && e.violations.some((x) => x.path === 'evotrainer.yaml:action_boundary.frozen' && /action_boundary is frozen/.test(x.rule)));
    sh(v.worktree!, 'checkout', '--', 'evotrainer.yaml');
    edit(v.worktree!, 'evotrainer.yaml', /hash: sha256:[0-9a-f]+/, `hash: sha256:${'0'.repeat(64)}`);
    await assert.rejects(commitVersion(h, 'v1'), (e: unknown) => e instanceof BoundaryError && e.violations.some((x) => x.path === 'evotrainer.yaml:eval_set.hash'));
    sh(v.worktree!, 'checkout', '--', 'evotrainer.yaml');
    writeFileSync(path.join(v.worktree!, 'README.md'), 'rewritten');
    await assert.rejects(commitVersion(h, 'v1'), (e: unknown) => e instanceof BoundaryError && e.violations[0]!.path === 'README.md' && /action_boundary\.editable/.test(e.violations[0]!.rule));
  });

  it('flags a change to more than one factor, and records an override with its reason', async () => {
    const h = await makeHarness();
    const v = await newVersion(h, { ...HYP, parent: 'v0' });
    edit(v.worktree!, REWARD, '"format": 1.0', '"format": 0.5');
    mkdirSync(path.join(v.worktree!, 'filters'), { recursive: true });
    writeFileSync(path.join(v.worktree!, 'filters', 'std_filter.py'), 'def keep(group):\n    return True\n');
    const err = await commitVersion(h, 'v1').then(() => null, (e: unknown) => e);
    assert.ok(err instanceof SingleFactorError, String(err));
    assert.deepEqual(err.check.units.sort(), ['filters/std_filter.py', REWARD]);
    assert.match(err.message, /--override-single-factor/);
    const reason = `the filter only exists to feed the new "format" term; it's one factor $(really)`;
    const c = await commitVersion(h, 'v1', { overrideSingleFactor: reason });
    assert.equal(c.entry.intervention?.singleFactorOverride?.reason, reason);
    assert.equal(parseTrailers(sh(h.root, 'log', '-1', '--format=%B', c.entry.branch))['Evo-Single-Factor-Override'], reason);
  });

  it('treats config keys as factors: one declared key prefix passes, two undeclared keys do not', async () => {
    const h = await makeHarness();
    const v = await newVersion(h, { ...HYP, parent: 'v0', layer: 'signal' });
    edit(v.worktree!, 'evotrainer.yaml', 'dead_group_ratio: {warning: 0.30, critical: 0.50}', 'dead_group_ratio: {warning: 0.25, critical: 0.45}');
    await assert.rejects(commitVersion(h, 'v1'), /more than one factor changed[\s\S]*evotrainer\.yaml:thresholds\.dead_group_ratio\.critical/);
    const c = await commitVersion(h, 'v1', { factor: 'evotrainer.yaml:thresholds.dead_group_ratio' });
    assert.equal(c.factor.ok, true);
    const d = await diffVersions(h, 'v0', 'v1');
    assert.deepEqual(d.files, [{ status: 'M', path: 'evotrainer.yaml' }]);
    assert.deepEqual(d.keys.map((k) => [k.key, k.before, k.after]), [
      ['thresholds.dead_group_ratio.critical', 0.5, 0.45],
      ['thresholds.dead_group_ratio.warning', 0.3, 0.25],
    ]);
  });

  it('gates promotion: a regression is refused with reasons and nothing moves; a rejection keeps the branch', async () => {
    const h = await makeHarness();
    await attachEvidence(h, 'v0', { metrics: { pass_rate: 0.3 } });
    const v1 = await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.28 });
    const before = refsSnapshot(h.root);
    const err = await promoteVersion(h, v1.id).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof GateError);
    assert.deepEqual(err.decision.reasons.filter((r) => !r.passed).map((r) => r.check), ['primary metric', 'success criterion']);
    assert.equal(refsSnapshot(h.root), before);
    await rejectVersion(h, v1.id, 'pass_rate regressed 0.30 → 0.28');
    assert.equal(sh(h.root, 'rev-parse', v1.branch), v1.commit, 'the rejected branch is kept');
    await assert.rejects(promoteVersion(h, v1.id), /already rejected/);
    await assert.rejects(newVersion(h, { ...HYP, parent: v1.id }), /v1 was rejected.*branch from its parent v0/);
    const l = await lineage(h);
    assert.match(formatLineage(l), /v1 {2}rejected +pass_rate 0\.28 \(-0\.02\).*reject by human: pass_rate regressed/);

    const v2 = await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.8'), { pass_rate: 0.29 }, { hyp: { success: 'format looks better to a reader' } });
    const p = await promoteVersion(h, v2.id, { override: 'reviewed 40 trajectories; honest gain' });
    assert.equal(p.decision.decidedBy, 'human');
    assert.ok(p.decision.reasons.some((r) => r.check === 'human override' && /40 trajectories/.test(r.detail)));
  });

  it('accepts branch slugs and messages with quotes, $(), ; and unicode, passing them to git untouched', async () => {
    const h = await makeHarness();
    const slug = `a"b$(id);c'ü`; // git forbids spaces in ref names, not these
    const v = await newVersion(h, { ...HYP, parent: 'v0', slug, hypothesis: `If we add "λ" $(id); pass_rate rises` });
    assert.equal(v.entry.branch, `evo/v1-${slug}`);
    edit(v.worktree!, REWARD, '"format": 1.0', '"format": 0.5');
    await commitVersion(h, 'v1', { message: `tweak; $(echo "no") ü` });
    assert.equal(sh(h.root, 'log', '-1', '--format=%s', v.entry.branch), `v1: tweak; $(echo "no") ü`);
    assert.equal(existsSync(path.join(h.root, 'pwned')), false);
    assert.equal(existsSync(path.join(v.worktree!, 'pwned')), false);
    await assert.rejects(newVersion(h, { ...HYP, parent: 'v0', slug: 'bad..name' }), /not a valid branch name/);
  });

  it('keeps versions and their evidence across push and clone (bare remote), and a clone can continue', async () => {
    const h = await makeHarness();
    await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"format": 1.0', '"format": 0.5'), { pass_rate: 0.4 }, { promote: true });
    const v2 = await evaluatedVersion(h, 'v1', (wt) => edit(wt, REWARD, '"format": 0.5', '"format": 0.4'), { pass_rate: 0.35 });
    await rejectVersion(h, v2.id, 'regressed');
    const remote = path.join(tempDir(), 'remote "bare".git');
    sh(h.root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
    sh(h.root, 'push', '--quiet', remote, 'main', 'refs/heads/evo/*:refs/heads/evo/*');
    const clone = path.join(tempDir(), 'clone ü');
    sh(h.root, 'clone', '--quiet', remote, clone);
    const c = await openHarness(clone);
    const there = await lineage(c);
    const here = await lineage(h);
    assert.deepEqual(there.versions.map((v) => [v.id, v.status, v.primary?.value, v.decision?.reasons, v.branchState]), here.versions.map((v) => [v.id, v.status, v.primary?.value, v.decision?.reasons, 'remote']));
    assert.equal(there.promoted?.version, 'v1');
    const e = (await readLedger(c)).entries.get('v2')!;
    assert.equal(e.rejectReason, 'regressed');
    assert.equal(e.transitions[1]!.evidence[0]!.summary, 'reward re-scored on cached rollouts: 0 ordering violations');
    // Writing in the clone adopts the remote ledger and branches locally.
    const v3 = await newVersion(c, { ...HYP, parent: 'v1', worktree: false });
    assert.equal(v3.entry.id, 'v3');
    assert.equal(sh(clone, 'rev-parse', 'evo/ledger^'), sh(clone, 'rev-parse', 'origin/evo/ledger'), 'the clone continues the shared ledger history');
    assert.equal(sh(clone, 'rev-parse', v2.branch), v2.commit);
  });
});

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { readLedger } from '../../src/core/harness/ledger';
import { initHarness } from '../../src/core/harness/init';
import type { JobRecord, LogChunk } from '../../src/core/jobs';
import { defaultStorePath, RolloutStore } from '../../src/core/store/store';
import { cancelRun, fetchAndImport, followJob, jobRecord, launchChoices, launchJob, loadJobs, loginCommand, mergedProfiles, profileNamed, shownBefore, templatesAt, watchJob } from '../../src/extension/jobs/engine';
import { buildRunsModel } from '../../src/extension/jobs/model';
import { clusterProfile, makeHarness as makeJobsHarness, startCluster, type ClusterInfo } from '../helpers/cluster';
import { repoRoot, tempDir } from '../helpers/tmp';
import { edit, evaluatedVersion, REWARD } from './harness/helpers';

const COUNT = '#!/bin/bash\nfor i in 1 2 3 4 5 6; do echo "line $i <b>x</b>"; sleep 0.4; done\necho done\n';
const ROLLOUTS = `#!/bin/bash
echo "rollout {{run}}"
mkdir -p "$EVOTRAINER_JOB_DIR/rollout_data"
for i in 1 2 3; do echo "step $i"; sleep 0.5; done
python3 - "$EVOTRAINER_JOB_DIR/rollout_data/1.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for k in range(6):
        f.write(json.dumps({"input": f"What is {k}+{k}?", "output": f"The answer is {2*k}", "gts": str(2*k), "score": float(k % 2 == 0), "step": 1}) + "\\n")
PY
echo finished
`;

const collect = (into: LogChunk[]) => (c: LogChunk) => into.push(c);
const textOf = (cs: LogChunk[]) => cs.map((c) => c.text).join('');

// The engine side of the Runs view and the job commands (what the editor calls through
// dist/panels.js), against real git harnesses, a real store, real local jobs and the real
// test cluster (sshd on 127.0.0.1 and a one-node Slurm).
describe('editor: jobs (Runs view data, launch, log follow, cancel, fetch)', () => {
  it('merges the manifest\'s clusters with the evotrainer.clusters setting; a bad setting names the key', () => {
    const dir = tempDir('evotrainer-editor-jobs-profiles-');
    const h = makeJobsHarness(path.join(dir, 'h'), { 'evotrainer.yaml': 'name: p\ndomain: math\ncluster: gpu\nclusters:\n  gpu:\n    kind: slurm\n    host: login1\n  box:\n    kind: ssh\n    host: box1\n' });
    const none = mergedProfiles(h.dir, {});
    assert.deepEqual(Object.keys(none.profiles), ['gpu', 'box']);
    assert.equal(none.defaultName, 'gpu');
    const merged = mergedProfiles(h.dir, { gpu: { kind: 'slurm', host: 'my-login-alias', sbatch: { partition: 'a100' } }, here: { kind: 'local' } });
    assert.equal(merged.profiles.gpu!.host, 'my-login-alias', 'the setting wins over the manifest for the same name');
    assert.equal(merged.origin.gpu, 'setting');
    assert.equal(merged.origin.box, 'manifest');
    assert.equal(profileNamed(h.dir, undefined, null).name, 'gpu', 'the manifest default');
    assert.equal(profileNamed(h.dir, { here: { kind: 'local' } }, 'here').kind, 'local');
    assert.throws(() => profileNamed(h.dir, undefined, 'nope'), /no cluster profile "nope"; known: gpu, box/);

    assert.throws(() => mergedProfiles(h.dir, { gpu: { kind: 'slurm' } }), /setting "evotrainer\.clusters": gpu\.host: a slurm profile needs "host"/);
    assert.throws(() => mergedProfiles(h.dir, { gpu: { kind: 'slurm', host: 'x', sbatch: { partiton: 'a100' } } }), /setting "evotrainer\.clusters": gpu\.sbatch: .*partiton/);
    assert.throws(() => mergedProfiles(h.dir, { 'my gpu; rm -rf ~': { kind: 'local' } }), /setting "evotrainer\.clusters": my gpu; rm -rf ~: /);
    assert.throws(() => mergedProfiles(h.dir, { box: { kind: 'kubernetes', host: 'k' } }), /box\.kind/);
    assert.throws(() => mergedProfiles(h.dir, ['not', 'an', 'object']), /setting "evotrainer\.clusters" must be an object of profiles by name/);
  });

  describe('a harness with versions, run on this machine', () => {
    let root: string;
    let v1: { id: string; commit: string };
    const setting = { fast: { kind: 'local', poll_seconds: 0.2 } };
    const base = tempDir('evotrainer-editor-jobs-local-');
    before(async () => {
      // The starter harness with a job template (jobs/ is outside what a version may change).
      const template = path.join(base, 'template');
      cpSync(path.join(repoRoot, 'harness-templates', 'starter'), template, { recursive: true });
      mkdirSync(path.join(template, 'jobs'));
      writeFileSync(path.join(template, 'jobs', 'count.sbatch'), COUNT);
      const h = (await initHarness(path.join(base, `h $(rm -rf x); "q"`), template)).harness;
      root = h.root;
      await evaluatedVersion(h, 'v0', (wt) => edit(wt, REWARD, '"acc": correct', '"acc": bool(correct)'), { pass_rate: 0.4 });
      const e = (await readLedger(h)).entries.get('v1')!;
      v1 = { id: e.id, commit: e.commit };
    });

    it('offers the ledger\'s versions, the templates at the chosen version\'s commit, and the merged profiles', async () => {
      const c = await launchChoices(root, setting);
      assert.deepEqual(c.versions.map((v) => v.label), ['v1', 'v0']);
      assert.equal(c.versions[0]!.commit, v1.commit);
      assert.match(c.versions[0]!.description, /^evaluated · [0-9a-f]{7}/);
      assert.deepEqual(c.profiles.map((p) => p.name), ['fast', 'local']);
      assert.equal(c.profiles[0]!.isDefault, true, 'the only configured profile is the default');
      assert.deepEqual(await templatesAt(root, v1.commit), [{ name: 'count', origin: 'jobs/count.sbatch' }]);
      assert.deepEqual(await templatesAt(root, c.versions[1]!.commit), [{ name: 'count', origin: 'jobs/count.sbatch' }]);
      assert.deepEqual(await templatesAt(root, '0'.repeat(40)), [], 'an unknown commit offers nothing');
    });

    it('launches a job of a version, follows its log as the editor, and resumes where it stopped with nothing repeated', async () => {
      const job = await launchJob(root, { version: 'v1', commit: v1.commit, template: 'count', profile: 'fast', setting });
      assert.equal(job.run, 'count-v1');
      assert.equal(job.version, 'v1');
      assert.equal(job.profile.name, 'fast');
      // The Runs view sees it at once (the record is on disk).
      const m = buildRunsModel(loadJobs(root), Date.now());
      assert.equal(m.groups[0]!.name, 'fast');
      assert.equal(m.groups[0]!.jobs[0]!.id, job.id);
      assert.ok(m.active >= 1);

      // First follow: stop after two lines (a window closed).
      const first: LogChunk[] = [];
      const ctl = new AbortController();
      const stopped = followJob(root, job.id, { follower: 'editor', onLog: (c) => {
        first.push(c);
        if (/line 2/.test(textOf(first))) ctl.abort();
      }, onState: () => undefined, onOffline: () => undefined, signal: ctl.signal });
      await assert.rejects(stopped, /stopped following/);
      await new Promise((r) => setTimeout(r, 600)); // the poll in flight saves its offsets
      const shown = textOf(first);
      assert.match(shown, /^line 1 <b>x<\/b>\nline 2/);
      // Opened again: what the editor showed before, then on from there.
      assert.equal(textOf(await shownBefore(root, job.id, 'editor')), shown);
      const rest: LogChunk[] = [];
      const states: string[] = [];
      const done = await followJob(root, job.id, { follower: 'editor', onLog: collect(rest), onState: (r) => states.push(r.state), onOffline: () => undefined, signal: new AbortController().signal });
      assert.equal(done.state, 'completed');
      assert.equal(shown + textOf(rest), [1, 2, 3, 4, 5, 6].map((i) => `line ${i} <b>x</b>\n`).join('') + 'done\n');
      assert.ok(states.includes('completed'));
      // Another follower (the CLI) still gets the whole log: the editor's offsets are its own.
      assert.deepEqual(Object.keys(jobRecord(root, job.id).logOffsets), ['editor']);
      const view = buildRunsModel(loadJobs(root), Date.now()).groups[0]!.jobs[0]!;
      assert.equal(view.state, 'completed');
      assert.doesNotMatch(view.contextValue, /\+cancel/);
    });

    it('a missing template or profile is a clear error and leaves no job behind', async () => {
      const before = loadJobs(root).length;
      await assert.rejects(launchJob(root, { version: 'v1', commit: v1.commit, template: 'train', profile: 'fast', setting }), /no job template "train"/);
      await assert.rejects(launchJob(root, { version: 'v1', commit: v1.commit, template: 'count', profile: 'gpu', setting }), /no cluster profile "gpu"; known: fast/);
      assert.equal(loadJobs(root).length, before, 'no record left behind');
    });
  });

  describe('on real Slurm over real ssh', () => {
    let c: ClusterInfo;
    let root: string;
    let commit: string;
    let setting: Record<string, unknown>;
    const dir = tempDir('evotrainer-editor-jobs-slurm-');
    before(() => {
      c = startCluster();
      const h = makeJobsHarness(path.join(dir, 'harness $(x) "q"'), { 'jobs/rollout.sbatch': ROLLOUTS, 'jobs/slow.sbatch': '#!/bin/bash\necho started\nsleep 120\necho never\n' });
      root = h.dir;
      commit = h.commit;
      const { name: _n, ...p } = clusterProfile(c, 'slurm', { sbatch: { time: '00:05:00' } });
      setting = { 'test-slurm': p };
    });

    it('launches, watches pending → running → completed, streams the log, fetches and imports the rollouts', async () => {
      const choices = await launchChoices(root, setting);
      assert.deepEqual(choices.versions.map((v) => v.label), ['HEAD'], 'no ledger yet: the working commit');
      assert.deepEqual((await templatesAt(root, commit)).map((t) => t.name), ['rollout', 'slow']);
      const job = await launchJob(root, { version: null, commit, template: 'rollout', profile: 'test-slurm', setting });
      assert.equal(job.state, 'pending');
      assert.match(job.remoteId!, /^\d+$/);
      const seen: JobRecord[] = [];
      const log: LogChunk[] = [];
      const watched = watchJob(root, job.id, { onState: (r) => seen.push(structuredClone(r)), signal: new AbortController().signal });
      const followed = followJob(root, job.id, { follower: 'editor', onLog: collect(log), onState: () => undefined, onOffline: () => undefined, signal: new AbortController().signal });
      const [w, f] = await Promise.all([watched, followed]);
      assert.equal(w.state, 'completed', JSON.stringify(w.failure));
      assert.equal(f.state, 'completed');
      assert.ok(seen.some((r) => r.state === 'running'), `states seen: ${seen.map((r) => r.state).join(',')}`);
      assert.match(textOf(log), /^rollout rollout-[0-9a-f]{7}\nstep 1\nstep 2\nstep 3\nfinished\n$/);
      const row = buildRunsModel(loadJobs(root), Date.now()).groups.find((g) => g.name === 'test-slurm')!.jobs.find((j) => j.id === job.id)!;
      assert.match(row.description, /^completed · \d+s \/ 5m 00s · run rollout-[0-9a-f]{7} · #\d+$/);
      assert.match(row.contextValue, /\+fetch/);

      const fetched = await fetchAndImport(root, job.id);
      assert.equal(fetched.imported, 6);
      assert.deepEqual(fetched.files.map((x) => [x.path, x.status]), [['rollout_data/1.jsonl', 'fetched']]);
      const again = await fetchAndImport(root, job.id);
      assert.deepEqual(again.files.map((x) => x.status), ['unchanged']);
      const store = await RolloutStore.open(defaultStorePath(root), { readOnly: true });
      try {
        assert.equal((await store.counts()).rollouts, 6, 'a second fetch imports nothing twice');
      } finally {
        store.close();
      }
    });

    it('the login terminal\'s command opens a shared connection that outlives the terminal', () => {
      const argv = loginCommand({ name: 'x', kind: 'slurm', host: 'login1', ssh_config: '/c' });
      assert.deepEqual(argv.slice(-3), ['login1', '--', 'true']);
      assert.ok(!argv.includes('-f') && !argv.includes('-N') && !argv.includes('BatchMode=yes'));
      assert.ok(argv.includes('ControlMaster=yes') && argv.some((a) => a.startsWith('ControlPersist=')));
    });

    it('cancels a running job; its watch ends cancelled', async () => {
      const job = await launchJob(root, { version: null, commit, template: 'slow', profile: 'test-slurm', setting });
      const states: string[] = [];
      const watched = watchJob(root, job.id, { onState: (r) => states.push(r.state), signal: new AbortController().signal });
      for (let i = 0; i < 100 && jobRecord(root, job.id).state !== 'running'; i++) await new Promise((r) => setTimeout(r, 200));
      assert.equal(jobRecord(root, job.id).state, 'running');
      await cancelRun(root, job.id);
      const final = await watched;
      assert.equal(final.state, 'cancelled');
      const row = buildRunsModel(loadJobs(root), Date.now()).groups[0]!.jobs.find((j) => j.id === job.id)!;
      assert.equal(row.icon.id, 'circle-slash');
      assert.doesNotMatch(row.contextValue, /\+cancel/);
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobRecord, JobState } from '../../src/core/jobs';
import { buildRunsModel, elapsedOf, formatDuration, groupDescription, parseTimeLimit, plain, pollInterval, presentJob, statusText, stateIcon } from '../../src/extension/jobs/model';

const T0 = Date.parse('2026-12-01T10:00:00Z');

function job(id: string, state: JobState, extra: Partial<JobRecord> = {}): JobRecord {
  return {
    id, key: null, profile: { name: 'gpu', kind: 'slurm', host: 'login1', sbatch: { time: '01:00:00' }, poll_seconds: 5 }, harness: '/h', commit: 'a'.repeat(40),
    version: 'v2', run: 'train-v2', template: 'train', vars: {}, array: null, outputs: ['rollout_data'], jobDir: '/w/jobs/x', workDir: '/w/trees/a', remoteId: '101',
    state, tasks: {}, exitCode: null, submittedAt: '2026-12-01T09:59:00Z', startedAt: null, endedAt: null, elapsedSeconds: null, gpus: 8, gpuHours: null,
    logOffsets: {}, failure: null, fetched: {}, source: null, updatedAt: '2026-12-01T10:00:00Z', ...extra,
  };
}

describe('Runs view model', () => {
  it('reads Slurm time limits in every sbatch form, and nothing else', () => {
    assert.equal(parseTimeLimit('90'), 5400);
    assert.equal(parseTimeLimit('10:30'), 630);
    assert.equal(parseTimeLimit('04:00:00'), 14400);
    assert.equal(parseTimeLimit('1-02'), 93600);
    assert.equal(parseTimeLimit('1-02:30'), 95400);
    assert.equal(parseTimeLimit('2-00:00:05'), 172805);
    for (const bad of ['UNLIMITED', 'infinite', '', '1h', '04:00:00; rm -rf ~', undefined, null]) assert.equal(parseTimeLimit(bad), null, String(bad));
    assert.deepEqual([5, 187, 3720, 183600].map(formatDuration), ['5s', '3m 07s', '1h 02m', '2d 03h']);
  });

  it('shows a running job with its elapsed time against the limit, version and run; actions by state', () => {
    const r = job('j1', 'running', { startedAt: '2026-12-01T09:50:00Z' });
    const n = presentJob(r, T0);
    assert.equal(n.label, 'train v2');
    assert.equal(n.description, 'running · 10m 00s / 1h 00m · run train-v2 · #101');
    assert.deepEqual(n.icon, { id: 'sync~spin', color: 'charts.blue' });
    assert.equal(n.contextValue, 'evotrainer.job+cancel+log+fetch');
    // Elapsed keeps moving while it runs.
    assert.equal(presentJob(r, T0 + 65_000).elapsedSeconds, 665);

    const done = presentJob(job('j2', 'completed', { startedAt: '2026-12-01T09:00:00Z', endedAt: '2026-12-01T09:30:00Z', elapsedSeconds: 1800, gpuHours: 4 }), T0);
    assert.equal(done.description, 'completed · 30m 00s / 1h 00m · run train-v2 · #101');
    assert.equal(done.contextValue, 'evotrainer.job+log+fetch', 'a final job cannot be cancelled');
    assert.match(done.tooltip, /4\.00 GPU-hours/);
    assert.equal(done.icon.color, 'testing.iconPassed');

    const pending = presentJob(job('j3', 'pending'), T0);
    assert.equal(pending.elapsedSeconds, null);
    assert.equal(pending.description, 'pending · run train-v2 · #101');
    const submitting = presentJob(job('j4', 'submitting', { remoteId: null, jobDir: null }), T0);
    assert.equal(submitting.contextValue, 'evotrainer.job', 'not on the cluster yet: nothing to cancel, no log');
    const noLimit = presentJob(job('j5', 'running', { startedAt: '2026-12-01T09:59:18Z', profile: { name: 'box', kind: 'ssh', host: 'box' } }), T0);
    assert.equal(noLimit.description, 'running · 42s · run train-v2 · #101');

    const failed = presentJob(job('j6', 'oom', { failure: { reason: 'oom', message: 'out of memory on node g12', logTail: 'CUDA OOM', nextStep: 'lower the micro-batch' } }), T0);
    assert.equal(failed.icon.id, 'flame');
    assert.match(failed.tooltip, /out of memory on node g12\nNext: lower the micro-batch/);
    assert.notEqual(stateIcon('cancelled').color, stateIcon('failed').color);
  });

  it('keeps untrusted names plain: no escapes, control characters or endless lines in a row', () => {
    const r = job('j1', 'running', { template: 'tr\x1b[31main\x07', run: `run\n${'x'.repeat(500)}`, version: 'v2<script>' });
    const n = presentJob(r, T0);
    assert.equal(n.label, 'train v2<script>');
    assert.doesNotMatch(n.description, /[\x00-\x1f]/);
    assert.ok(n.description.length < 120, n.description);
    assert.equal(plain('a\x1b]8;;http://x\x07link\x1b]8;;\x07 b'), 'alink b');
  });

  it('groups jobs per profile (newest first, local last) and counts what is active', () => {
    const local = { name: 'local', kind: 'local' as const, poll_seconds: 1 };
    const box = { name: 'box', kind: 'ssh' as const, host: 'box.example', poll_seconds: 2 };
    const m = buildRunsModel([
      job('a', 'completed', { submittedAt: '2026-12-01T08:00:00Z' }),
      job('b', 'running', { submittedAt: '2026-12-01T09:00:00Z', startedAt: '2026-12-01T09:00:00Z' }),
      job('c', 'pending', { submittedAt: '2026-12-01T09:30:00Z' }),
      job('d', 'running', { profile: local, submittedAt: '2026-12-01T07:00:00Z', startedAt: '2026-12-01T07:00:00Z' }),
      job('e', 'failed', { profile: box }),
    ], T0);
    assert.deepEqual(m.groups.map((g) => g.name), ['box', 'gpu', 'local']);
    assert.deepEqual(m.groups[1]!.jobs.map((j) => j.id), ['c', 'b', 'a']);
    assert.equal(m.active, 3);
    assert.equal(m.running, 2);
    assert.equal(groupDescription(m.groups[1]!), 'slurm · login1 · 2 active, 3 jobs');
    assert.equal(groupDescription(m.groups[0]!), 'ssh · box.example · 1 job');
    // The poll interval: the shortest among profiles with active jobs (box has none).
    assert.equal(pollInterval(m), 1000);
    assert.deepEqual(statusText(m), { text: '$(sync~spin) 3 jobs', tooltip: 'EvoTrainer: 2 running, 1 queued — click to show the Runs view' });
    assert.equal(statusText(buildRunsModel([job('a', 'completed')], T0)), null, 'no status item when nothing runs');
    assert.equal(pollInterval(buildRunsModel([], T0)), 10_000);
  });

  it('counts a final job to its end, not to now', () => {
    const r = job('x', 'cancelled', { startedAt: '2026-12-01T09:00:00Z', endedAt: '2026-12-01T09:00:30Z' });
    assert.equal(elapsedOf(r, T0), 30);
  });
});

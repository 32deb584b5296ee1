import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { classifyFailure, clustersSchema, combineStates, JobRecords, parseProfiles, parseSacct, parseScontrol, parseSqueue, renderTemplate, resolveProfile, shJoin, shQuote, templateValues, withPrelude, type JobRecord, type NamedProfile } from '../../../src/core/jobs';
import { seededRandom } from '../../../src/core/util/random';
import { tempDir } from '../../helpers/tmp';

const PIECES = [' ', "'", '"', '$(id)', '`id`', ';', '\n', '\\', '$HOME', '*', '~', '&', '|', '>', '\t', '!', '#', 'é', '日本', '🙂', '-n', '{a,b}', 'x'];
const draw = (rand: () => number) => Array.from({ length: 1 + Math.floor(rand() * 8) }, () => PIECES[Math.floor(rand() * PIECES.length)]!).join('');

describe('shQuote', () => {
  it('round-trips 500 seeded strings through a real sh byte for byte', () => {
    const rand = seededRandom(42);
    const cases = Array.from({ length: 500 }, () => draw(rand));
    const r = spawnSync('sh', ['-c', shJoin(['printf', '%s\\0', ...cases])]);
    assert.equal(r.status, 0);
    assert.deepEqual(r.stdout, Buffer.from(cases.map((c) => `${c}\0`).join('')));
  });

  it('leaves plain words bare, quotes the rest, and refuses NUL', () => {
    assert.equal(shQuote('abc-1.2/x'), 'abc-1.2/x');
    assert.equal(shQuote(''), "''");
    assert.equal(shQuote("it's"), `'it'\\''s'`);
    assert.throws(() => shQuote('a\0b'), /NUL/);
  });
});

describe('templates', () => {
  const profile: NamedProfile = { name: 'p', kind: 'slurm', host: 'h', sbatch: { partition: 'gpu q' } };
  const values = templateValues({ version: 'v1', run: `r'un $(id) "x" \`y\`\nz` }, profile, { lr: '1e-6' });

  it('escapes a placeholder for where it stands: bare word, single and double quotes, here-documents, #SBATCH lines', () => {
    const text = [
      '#!/bin/bash',
      '#SBATCH --job-name={{run}} --partition={{profile.sbatch.partition}}',
      'a={{run}}',
      "b='pre {{run}} post'",
      'c="pre {{run}} post"',
      'cat <<EOF',
      'd {{run}}',
      'EOF',
      "cat <<'EOF'",
      'e {{lr}}',
      'EOF',
      'printf "%s|%s|%s\\n" "$a" "$b" "$c" # {{run}}',
      '',
    ].join('\n');
    const out = renderTemplate({ origin: 't', text }, values);
    assert.match(out, /^#SBATCH --job-name=r_un___id___x___y__z --partition=gpu_q$/m);
    const run = spawnSync('bash', ['-c', out], { encoding: 'utf8' });
    const v = values.get('run')!;
    assert.equal(run.stdout, `d ${v}\ne 1e-6\n${v}|pre ${v} post|pre ${v} post\n`);
  });

  it('names an unknown placeholder with file and line', () => {
    assert.throws(() => renderTemplate({ origin: 'jobs/x.sbatch', text: 'echo ok\necho {{nope}}' }, values), /jobs\/x\.sbatch:2: unknown placeholder \{\{nope\}\}/);
  });

  it('puts the prelude after the shebang and #SBATCH lines', () => {
    assert.equal(withPrelude('#!/bin/sh\n#SBATCH -n 1\necho hi', ['cd /x']), '#!/bin/sh\n#SBATCH -n 1\ncd /x\necho hi');
    assert.equal(withPrelude('echo hi', ['cd /x']), '#!/bin/bash\ncd /x\necho hi');
  });
});

describe('Slurm output', () => {
  it('reads squeue, sacct and scontrol', () => {
    assert.deepEqual([...parseSqueue('12|RUNNING\n13_1|PENDING\n')], [['12', 'RUNNING'], ['13_1', 'PENDING']]);
    const acct = parseSacct('12|COMPLETED|0:0|5|2026-01-01T00:00:00|2026-01-01T00:00:05\n13_1|CANCELLED by 1001|0:15|3|2026-01-01T00:00:00|2026-01-01T00:00:03\n14|OUT_OF_MEMORY|0:125|9|Unknown|Unknown\n');
    assert.deepEqual(acct.map((t) => [t.id, t.state, t.exitCode, t.elapsedSeconds]), [['12', 'completed', 0, 5], ['13_1', 'cancelled', 143, 3], ['14', 'oom', 253, 9]]);
    const ctl = parseScontrol('JobId=21 ArrayJobId=20 ArrayTaskId=1 JobName=x JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 RunTime=00:01:02 TimeLimit=00:01:00 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:01:02\n');
    assert.deepEqual(ctl.map((t) => [t.id, t.state, t.elapsedSeconds]), [['20_1', 'timeout', 62]]);
  });

  it('combines task states and classifies failures with a next step', () => {
    assert.equal(combineStates(['completed', 'running']), 'running');
    assert.equal(combineStates(['completed', 'pending']), 'running');
    assert.equal(combineStates(['pending', 'pending']), 'pending');
    assert.equal(combineStates(['completed', 'failed', 'timeout']), 'timeout');
    assert.equal(combineStates(['completed']), 'completed');
    const base = { exitCode: 1, tasks: {}, jobDir: '/w/j', remoteId: '5', profile: { name: 'c', kind: 'slurm' as const, host: 'h' } };
    assert.equal(classifyFailure({ ...base, state: 'failed' }, 'torch.cuda.OutOfMemoryError: CUDA out of memory')!.reason, 'oom');
    assert.match(classifyFailure({ ...base, state: 'timeout' }, '')!.nextStep, /sbatch\.time/);
    assert.match(classifyFailure({ ...base, state: 'node_fail' }, '')!.nextStep, /--exclude=NODE/);
    assert.match(classifyFailure({ ...base, state: 'lost' }, '')!.nextStep, /\/w\/j/);
    assert.equal(classifyFailure({ ...base, state: 'completed' }, ''), null);
  });
});

describe('profiles and records', () => {
  it('validates profiles with a clear message and resolves the default', () => {
    assert.throws(() => parseProfiles({ gpu: { kind: 'slurm' } }, 'settings'), /settings: gpu\.host: a slurm profile needs "host"/);
    assert.throws(() => parseProfiles({ box: { kind: 'ssh', host: 'h', sbatch: { gpus: 1 } } }, 'f'), /"sbatch" applies to slurm profiles only/);
    const all = clustersSchema.parse({ a: { kind: 'ssh', host: 'h' }, b: { kind: 'local' } });
    assert.equal(resolveProfile(all, null, 'a').host, 'h');
    assert.equal(resolveProfile(undefined).kind, 'local');
    assert.throws(() => resolveProfile(all, 'zz'), /no cluster profile "zz"; known: a, b/);
  });

  it('gives one job per idempotency key, also to a second process claiming it', () => {
    const dir = tempDir();
    const a = new JobRecords(path.join(dir, 'r'));
    const b = new JobRecords(path.join(dir, 'r'));
    assert.equal(a.claimKey('train:v3', 'j1'), null);
    assert.equal(b.claimKey('train:v3', 'j2'), 'j1');
    a.save({ id: 'j1', key: 'train:v3', state: 'running', submittedAt: '2026-01-01' } as JobRecord);
    assert.equal(b.byKey('train:v3')!.id, 'j1');
    assert.deepEqual(b.list().map((r) => r.id), ['j1']);
    assert.throws(() => a.get('../x'), /not a job id/);
  });
});

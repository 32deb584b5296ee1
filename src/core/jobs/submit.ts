import os from 'node:os';
import path from 'node:path';
import { git } from '../harness/git';
import { pollMs, profileGpus, type NamedProfile } from './profile';
import { joinRemote, shJoin, shPath, shQuote } from './quote';
import { isFinal, JobRecords, type JobRecord } from './records';
import { loadTemplate, renderTemplate, templateValues, withPrelude, type TemplateSource } from './render';
import { text, type Shell } from './shell';
import { JobError, must, recordsFor, shellOf } from './connection';
import { refreshJobs } from './monitor';

/** Submitting a job: the commit synced to the profile's work directory, the script rendered and started (sbatch, or a detached runner). */

/** The absolute work directory of a profile, created if missing. */
async function workRoot(profile: NamedProfile, shell: Shell, harness: string | null): Promise<string> {
  const dir = profile.work_dir ?? (profile.kind === 'local' ? path.join(harness ?? process.cwd(), '.evotrainer', 'jobs', 'work') : '~/evotrainer');
  const abs = profile.kind !== 'local' ? dir : dir === '~' || dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(1)) : path.resolve(harness ?? process.cwd(), dir);
  return (await must(shell, `mkdir -p ${shPath(abs)} && cd ${shPath(abs)} && pwd -P`, `creating the work directory ${dir}`)).trim();
}

/**
 * Sync: pushes the commit to a bare repo in the work directory and checks it out as a
 * worktree per commit. Idempotent: a second sync of the same commit changes nothing.
 */
export async function syncCommit(profile: NamedProfile, harness: string, commit: string, work: string): Promise<string> {
  const shell = shellOf(profile);
  const full = (await git(harness, ['rev-parse', '--verify', `${commit}^{commit}`])).stdout.trim();
  const bare = joinRemote(work, 'repo.git');
  const tree = joinRemote(work, 'trees', full);
  const have = text(await shell.exec(`test -d ${shQuote(tree)} && git -C ${shQuote(tree)} rev-parse HEAD`)).trim();
  if (have === full) return tree;
  await must(shell, `git init -q --bare ${shQuote(bare)} 2>/dev/null || test -d ${shQuote(bare)}`, 'creating the bare repository');
  const sshArgv = shell.sshArgv();
  const env = sshArgv ? { GIT_SSH_COMMAND: shJoin(sshArgv), GIT_SSH_VARIANT: 'ssh' } : {};
  const url = sshArgv ? `ssh://${profile.host}${bare.startsWith('/') ? '' : '/~/'}${bare}` : bare;
  await git(harness, ['push', '-q', '--no-verify', url, `${full}:refs/evotrainer/${full}`], { env });
  await must(shell, `cd ${shQuote(bare)} && { test -d ${shQuote(tree)} || git worktree add -q --detach ${shQuote(tree)} ${full}; } && git -C ${shQuote(tree)} rev-parse HEAD`, `checking out ${full.slice(0, 7)} as a worktree`);
  return tree;
}

export interface SubmitOptions {
  profile: NamedProfile;
  /** Where job records live (default: <harness>/.evotrainer/jobs). */
  records?: JobRecords;
  harness?: string | null;
  /** Commit (or any rev) of the harness to run; default HEAD when a harness is given. */
  commit?: string | null;
  version?: string | null;
  run?: string | null;
  /** A script given inline, or the name of a harness template (jobs/<name>.sbatch or manifest jobs.<name>). */
  script?: string;
  templateName?: string;
  vars?: Record<string, string>;
  /** Slurm --array=0-(N-1); each task reads $SLURM_ARRAY_TASK_ID (local and ssh run the N tasks side by side). */
  array?: number | null;
  /** Paths relative to the job directory ($EVOTRAINER_JOB_DIR) that fetchOutputs copies back. */
  outputs?: string[];
  /** Idempotency key: a submit with a key already used returns that job instead of submitting again. */
  key?: string | null;
  timeoutMinutes?: number;
}

function sbatchArgs(r: JobRecord, timeoutMinutes: number | undefined): string[] {
  const s = r.profile.sbatch ?? {};
  const a = ['--parsable', `--job-name=${`evo-${r.template}-${r.id}`.replace(/[^A-Za-z0-9._-]/g, '_')}`, `--chdir=${r.workDir}`];
  a.push(`--output=${r.jobDir}/${r.array ? 'log.%a' : 'log'}`);
  if (r.array) a.push(`--array=0-${r.array - 1}`);
  if (s.partition) a.push(`--partition=${s.partition}`);
  if (s.account) a.push(`--account=${s.account}`);
  if (s.gres) a.push(`--gres=${s.gres}`);
  else if (s.gpus) a.push(`--gres=gpu:${s.gpus}`);
  if (s.nodes) a.push(`--nodes=${s.nodes}`);
  if (s.cpus_per_task) a.push(`--cpus-per-task=${s.cpus_per_task}`);
  if (s.mem) a.push(`--mem=${s.mem}`);
  if (s.time) a.push(`--time=${s.time}`);
  else if (timeoutMinutes) a.push(`--time=${Math.max(1, Math.ceil(timeoutMinutes))}`);
  a.push(...(s.extra ?? []));
  return a;
}

/** The detached runner (ssh and local): pid file, start time, per-task exit files. */
function runnerScript(r: JobRecord, timeoutMinutes: number | undefined): string {
  const t = timeoutMinutes ? `timeout --kill-after=10 ${Math.max(1, Math.round(timeoutMinutes * 60))} ` : '';
  const lines = ['#!/bin/sh', 'echo $$ > pid.tmp && mv pid.tmp pid', 'date +%s > start'];
  if (r.array) {
    lines.push(
      'i=0',
      `while [ $i -lt ${r.array} ]; do`,
      `  ( SLURM_ARRAY_TASK_ID=$i; export SLURM_ARRAY_TASK_ID; ${t}bash job.sh > log.$i 2>&1; echo "$? $(date +%s)" > exit.$i.tmp && mv exit.$i.tmp exit.$i ) &`,
      '  i=$((i+1))',
      'done',
      'wait',
      'c=0; for f in exit.*; do e=$(cut -d" " -f1 "$f"); [ "$e" -ne 0 ] && c=$e; done',
    );
  } else {
    lines.push(`${t}bash job.sh > log 2>&1`, 'c=$?');
  }
  lines.push('echo "$c $(date +%s)" > exit.tmp && mv exit.tmp exit', '');
  return lines.join('\n');
}

/**
 * Submits a job (or returns the job already holding `key`). Crash-safe: the target-side
 * start is idempotent (slurm_id / pid files in the job directory), so a submit interrupted
 * after sbatch and repeated with the same key finds the job instead of starting another.
 */
/**
 * Why a job script can only run inside a Slurm allocation (it reads the allocation's nodes,
 * or calls srun/scontrol/sbatch itself), or null when it runs anywhere.
 */
export function slurmOnly(script: string): string | null {
  const code = script.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
  const m = /\$\{?(SLURM_JOB_NODELIST|SLURM_NODELIST)\b|^\s*(sbatch|srun|scontrol)\s|\$\((srun|scontrol)\s/m.exec(code);
  if (!m) return null;
  return m[1] ? `it reads $${m[1]}` : `it runs ${m[2] ?? m[3]}`;
}

export async function submitJob(o: SubmitOptions): Promise<JobRecord> {
  const records = recordsFor(o.harness, o.records);
  if (!o.script && !o.templateName) throw new JobError('submitJob needs a script or a templateName');
  if (o.array !== undefined && o.array !== null && (!Number.isInteger(o.array) || o.array < 1)) throw new JobError(`array must be a positive whole number of tasks, not ${o.array}`);
  for (const out of o.outputs ?? []) if (path.isAbsolute(out) || out.split('/').includes('..')) throw new JobError(`output "${out}" must be a path inside the job directory (relative, no "..")`);
  let r = o.key ? records.byKey(o.key) : null;
  if (r && r.state !== 'submitting') return r;
  if (!r) {
    const id = JobRecords.newId();
    const harness = o.harness ? path.resolve(o.harness) : null;
    const commit = harness ? (await git(harness, ['rev-parse', '--verify', `${o.commit ?? 'HEAD'}^{commit}`])).stdout.trim() : null;
    const now = new Date().toISOString();
    r = {
      id, key: o.key ?? null, profile: o.profile, harness, commit, version: o.version ?? null, run: o.run ?? null,
      template: o.templateName ?? 'script', vars: o.vars ?? {}, array: o.array ?? null, outputs: o.outputs ?? [],
      jobDir: null, workDir: null, remoteId: null, state: 'submitting', tasks: {}, exitCode: null, submittedAt: now,
      startedAt: null, endedAt: null, elapsedSeconds: null, gpus: profileGpus(o.profile), gpuHours: null, logOffsets: {},
      failure: null, fetched: {}, source: null, updatedAt: now,
    };
    if (o.key) {
      const held = records.claimKey(o.key, id);
      if (held) {
        for (let i = 0; i < 100; i++) {
          const other = records.get(held);
          if (other) return other.state === 'submitting' ? submitJob({ ...o, records }) : other;
          await new Promise((res) => setTimeout(res, 50));
        }
        throw new JobError(`the key "${o.key}" is held by job ${held}, whose record is missing from ${records.dir}`);
      }
    }
    records.save(r);
  }
  await underLimit(records, r);
  const shell = shellOf(r.profile);
  const work = await workRoot(r.profile, shell, r.harness);
  r.jobDir = joinRemote(work, 'jobs', r.id);
  r.workDir = r.harness && r.commit ? await syncCommit(r.profile, r.harness, r.commit, work) : r.jobDir;
  let src: TemplateSource;
  if (o.script !== undefined) src = { origin: 'script', text: o.script };
  else src = await loadTemplate(r.harness ?? process.cwd(), r.commit, o.templateName!);
  const needsSlurm = r.profile.kind !== 'slurm' ? slurmOnly(src.text) : null;
  if (needsSlurm) {
    const message = `${src.origin} is a Slurm job (${needsSlurm}); the ${r.profile.kind} profile "${r.profile.name}" would run it as a plain script, where Slurm's allocation does not exist.`;
    const nextStep = 'Submit it through a Slurm cluster profile (clusters: {gpu: {kind: slurm, host: ALIAS, work_dir: …}} and cluster: gpu in evotrainer.yaml, or --profile gpu), or give the job a path that runs here (jobs.' + (o.templateName ?? 'train') + '.command in evotrainer.yaml, e.g. `bash train/run_verl.sh` on a machine with GPUs) and remove the .sbatch file from that version.';
    r.state = 'failed';
    r.failure = { reason: 'failed', message, logTail: '', nextStep };
    r.endedAt = new Date().toISOString();
    records.save(r);
    throw new JobError(`${message} ${nextStep}`);
  }
  const timeoutMinutes = o.timeoutMinutes ?? src.timeoutMinutes;
  const values = templateValues({ version: r.version, commit: r.commit, run: r.run, workdir: r.workDir, jobdir: r.jobDir, job: r.id, template: r.template }, r.profile, r.vars);
  const env: [string, string | null][] = [['EVOTRAINER_JOB_ID', r.id], ['EVOTRAINER_JOB_DIR', r.jobDir], ['EVOTRAINER_WORKDIR', r.workDir], ['EVOTRAINER_VERSION', r.version], ['EVOTRAINER_RUN', r.run], ['EVOTRAINER_COMMIT', r.commit]];
  const prelude = [
    '# --- set by EvoTrainer',
    ...(r.profile.setup ?? []),
    ...env.filter(([, v]) => v !== null).map(([k, v]) => `export ${k}=${shQuote(v!)}`),
    `cd ${shQuote(r.workDir)} || exit 1`,
    '# ---',
  ];
  const script = withPrelude(renderTemplate(src, values), prelude);
  const jd = shQuote(r.jobDir);
  await must(shell, `mkdir -p ${jd} && cat > ${jd}/job.sh.tmp && mv ${jd}/job.sh.tmp ${jd}/job.sh`, 'writing the job script', script);
  let id: string;
  if (r.profile.kind === 'slurm') {
    const args = shJoin(['sbatch', ...sbatchArgs(r, timeoutMinutes), 'job.sh']);
    // One sbatch per job directory, also when two processes resume the same submit at once.
    const start = [
      `cd ${jd} || exit 1`,
      'if [ ! -s slurm_id ]; then',
      `  if mkdir .sbatch.lock 2>/dev/null; then ${args} > slurm_id.tmp && mv slurm_id.tmp slurm_id || { rmdir .sbatch.lock; exit 1; }`,
      '  else i=0; while [ ! -s slurm_id ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; [ -s slurm_id ] || { rmdir .sbatch.lock; echo "another submit of this job did not finish; submit again" >&2; exit 1; }; fi',
      'fi',
      'cat slurm_id',
    ].join('\n');
    const out = await shell.exec(start, { timeoutMs: 120_000 });
    if (out.code !== 0) {
      r.state = 'failed';
      r.failure = { reason: 'failed', message: `sbatch refused the job: ${out.stderr.trim().split('\n').slice(-3).join(' / ')}`, logTail: out.stderr.trim(), nextStep: 'Fix the sbatch options of the profile (partition, account, gres, time) or the #SBATCH lines of the template, then submit again with a new key.' };
      r.endedAt = new Date().toISOString();
      records.save(r);
      return r;
    }
    id = text(out).trim().split(';')[0]!;
  } else {
    await must(shell, `cat > ${jd}/run.sh`, 'writing the runner', runnerScript(r, timeoutMinutes));
    const start = `if [ ! -s pid ]; then setsid nohup sh run.sh > /dev/null 2>&1 < /dev/null & i=0; while [ ! -s pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; fi; cat pid`;
    id = (await must(shell, `cd ${jd} && ${start}`, 'starting the job')).trim();
  }
  if (!/^\d+$/.test(id)) throw new JobError(`could not read the job id from the target (got ${JSON.stringify(id.slice(0, 80))}); the record ${r.id} stays "submitting": submit again with the same key to resume`);
  r.remoteId = id;
  r.state = 'pending';
  records.save(r);
  return r;
}

/** The profile's concurrency limit: waits (polling the profile's jobs) until a slot is free. */
async function underLimit(records: JobRecords, r: JobRecord): Promise<void> {
  const limit = r.profile.concurrency;
  if (!limit) return;
  for (;;) {
    const active = records.list().filter((x) => x.id !== r.id && x.profile.name === r.profile.name && x.remoteId && !isFinal(x.state));
    if (active.length < limit) return;
    await refreshJobs(records, active.map((x) => x.id));
    if (records.list().filter((x) => x.id !== r.id && x.profile.name === r.profile.name && x.remoteId && !isFinal(x.state)).length < limit) return;
    await new Promise((res) => setTimeout(res, pollMs(r.profile)));
  }
}

import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { git } from '../harness/git';
import { pollMs, profileGpus, type NamedProfile } from './profile';
import { joinRemote, shJoin, shPath, shQuote } from './quote';
import { isFinal, JobRecords, type FetchedFile, type JobRecord, type JobState, type TaskState } from './records';
import { loadTemplate, renderTemplate, templateValues, withPrelude, type TemplateSource } from './render';
import { shellFor, SshError, text, type Shell } from './shell';
import { classifyFailure, combineStates, mapSlurmState, parseSacct, parseScontrol, parseSqueue, type SlurmTask } from './slurm';

export class JobError extends Error {}

/** One shell per profile and process: the shared ssh connection, and the counters the benchmark prints. */
const shells = new Map<string, Shell>();
export function shellOf(profile: NamedProfile): Shell {
  const k = JSON.stringify([profile.name, profile.kind, profile.host, profile.ssh_config, profile.setup]);
  let s = shells.get(k);
  if (!s) shells.set(k, (s = shellFor(profile)));
  return s;
}

async function must(shell: Shell, command: string, what: string, input?: string | Buffer): Promise<string> {
  const r = await shell.exec(command, { input, timeoutMs: 120_000 });
  if (r.code !== 0) throw new JobError(`${what} failed on ${shell.target.replace(/:$/, '') || 'this machine'} (exit ${r.code}): ${(r.stderr.trim() || text(r).trim()).split('\n').slice(-5).join(' / ')}`);
  return text(r);
}

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

export function recordsFor(harness: string | null | undefined, records?: JobRecords): JobRecords {
  if (records) return records;
  const dir = process.env.EVOTRAINER_JOBS_DIR ?? path.join(harness ?? process.cwd(), '.evotrainer', 'jobs');
  return new JobRecords(dir);
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

export interface LogChunk {
  jobId: string;
  /** Array task index as text, or "" for a single task. */
  task: string;
  text: string;
}

export interface WaitOptions {
  records?: JobRecords;
  /** Who follows the log (default "default"): each follower resumes from its own offsets. */
  follower?: string;
  onLog?: (c: LogChunk) => void;
  onState?: (r: JobRecord) => void;
  /** A poll failed (connection dropped): the job is not lost, the next poll retries. */
  onOffline?: (err: Error) => void;
  signal?: AbortSignal;
  pollMs?: number;
  /**
   * Fetch the outputs while the job runs (every `everyMs`, default every poll) and once
   * more at the end, importing them into `store` when given: rollouts reach the store
   * before the job ends. Results go to onFetch.
   */
  fetch?: { dir: string; store?: FetchStore; everyMs?: number; onFetch?: (f: FetchResult) => void };
}

interface Watcher {
  id: string;
  opts: WaitOptions;
  resolve: (r: JobRecord) => void;
  reject: (e: Error) => void;
  decoders: Map<string, StringDecoder>;
  follower: string;
  lastFetch?: number;
}

const LOG_CHUNK = 1 << 20;

/**
 * Follows the jobs of one profile: per interval one status command for all of them (one
 * squeue on Slurm) and one command for all new log bytes.
 */
class ProfileMonitor {
  private watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  polls = 0;
  constructor(
    readonly profile: NamedProfile,
    readonly records: JobRecords,
    private interval: number,
  ) {}

  add(w: Watcher, interval: number): void {
    this.interval = Math.min(this.interval, interval);
    this.watchers.add(w);
    w.opts.signal?.addEventListener('abort', () => {
      this.watchers.delete(w);
      w.reject(new JobError(`stopped following ${w.id} (the job itself keeps running)`));
    });
    if (!this.timer && !this.running) this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    if (!this.watchers.size) return;
    this.running = true;
    const ws = [...this.watchers];
    try {
      const recs = new Map<string, JobRecord>();
      for (const w of ws) if (!recs.has(w.id)) recs.set(w.id, this.records.require(w.id));
      const before = new Map([...recs].map(([id, r]) => [id, JSON.stringify(r)]));
      const changed = await pollStates(this.profile, [...recs.values()].filter((r) => !isFinal(r.state)));
      this.polls++;
      for (const r of changed) recs.set(r.id, r);
      await readLogs(this.profile, [...recs.values()], ws);
      for (const r of recs.values()) {
        if (isFinal(r.state) && !r.failure && r.state !== 'completed') await finalize(this.profile, r);
        if (JSON.stringify(r) !== before.get(r.id)) this.records.save(r);
      }
      for (const w of ws) {
        const r = recs.get(w.id)!;
        if (changed.some((c) => c.id === r.id)) w.opts.onState?.(r);
        const f = w.opts.fetch;
        if (f && r.outputs.length && r.state !== 'pending' && (isFinal(r.state) || Date.now() - (w.lastFetch ?? 0) >= (f.everyMs ?? 0))) {
          w.lastFetch = Date.now();
          const res = await fetchOutputs(r.id, f.dir, { records: this.records, store: f.store });
          f.onFetch?.(res);
        }
        if (isFinal(r.state)) {
          this.watchers.delete(w);
          w.resolve(r);
        }
      }
    } catch (e) {
      const err = e as Error;
      // A dropped connection or a scheduler that did not answer: the jobs are not lost, the
      // next poll retries. What needs a person (host key, login) ends the wait.
      if ((err instanceof SshError && err.failure === 'unreachable') || (err instanceof JobError && !(err instanceof SshError))) {
        for (const w of ws) w.opts.onOffline?.(err);
      } else {
        for (const w of ws) {
          this.watchers.delete(w);
          w.reject(err);
        }
      }
    } finally {
      this.running = false;
      if (this.watchers.size) this.schedule(this.interval);
    }
  }
}

const monitors = new Map<string, ProfileMonitor>();

/** Polls of each profile's monitor so far (the benchmark checks: at most one squeue per interval). */
export function monitorPolls(): number {
  return [...monitors.values()].reduce((a, m) => a + m.polls, 0);
}

/**
 * Waits until the job is final, streaming new log bytes to onLog from the offset the record
 * holds (a follow after a restart or a dropped connection resumes there, with nothing
 * repeated). Every job waited on at once shares one poll per interval.
 */
export function waitForJob(id: string, opts: WaitOptions = {}): Promise<JobRecord> {
  const records = opts.records ?? recordsFor(null);
  const r = records.require(id);
  if (r.state === 'submitting') return Promise.reject(new JobError(`job ${id} did not reach the cluster (its submit was interrupted): submit again with its key${r.key ? ` "${r.key}"` : ''} to finish the submit`));
  const interval = opts.pollMs ?? pollMs(r.profile);
  const key = `${records.dir}\0${JSON.stringify(r.profile)}`;
  let m = monitors.get(key);
  if (!m) monitors.set(key, (m = new ProfileMonitor(r.profile, records, interval)));
  const mon = m;
  return new Promise((resolve, reject) => mon.add({ id, opts, resolve, reject, decoders: new Map(), follower: opts.follower ?? 'default' }, interval));
}

function taskKeys(r: JobRecord): string[] {
  return r.array ? Array.from({ length: r.array }, (_, i) => String(i)) : [''];
}

function applyTasks(r: JobRecord, tasks: Record<string, TaskState>, source: string): boolean {
  const before = JSON.stringify([r.state, r.tasks]);
  r.tasks = tasks;
  r.state = combineStates(Object.values(tasks).map((t) => t.state));
  const codes = Object.values(tasks).map((t) => t.exitCode).filter((c): c is number => c !== null);
  r.exitCode = codes.length ? (codes.find((c) => c !== 0) ?? 0) : r.exitCode;
  if ((r.state === 'running' || isFinal(r.state)) && !r.startedAt) r.startedAt = new Date().toISOString();
  if (isFinal(r.state)) {
    r.source = source;
    if (!r.endedAt) r.endedAt = new Date().toISOString();
    if (r.elapsedSeconds === null && r.startedAt) r.elapsedSeconds = Math.max(0, (Date.parse(r.endedAt) - Date.parse(r.startedAt)) / 1000);
    r.gpuHours = ((r.elapsedSeconds ?? 0) * r.gpus) / 3600;
  }
  return JSON.stringify([r.state, r.tasks]) !== before;
}

/**
 * One status poll for many jobs of a profile: one squeue (and, for jobs that left the queue,
 * one sacct, falling back to scontrol) on Slurm; one command reading pid and exit files
 * otherwise. Returns the records whose state changed (not yet saved).
 */
export async function pollStates(profile: NamedProfile, recs: JobRecord[]): Promise<JobRecord[]> {
  const live = recs.filter((r) => r.remoteId && !isFinal(r.state));
  if (!live.length) return [];
  const shell = shellOf(profile);
  const changed: JobRecord[] = [];
  if (profile.kind === 'slurm') {
    const q = await shell.exec(`squeue -h -r -u "$(id -un)" -o '%i|%T'`, { timeoutMs: 60_000 });
    if (q.code !== 0) throw new JobError(`squeue failed: ${q.stderr.trim()}`);
    const queue = parseSqueue(text(q));
    const gone: JobRecord[] = [];
    for (const r of live) {
      const tasks: Record<string, TaskState> = {};
      let inQueue = 0;
      for (const k of taskKeys(r)) {
        const s = queue.get(k ? `${r.remoteId}_${k}` : r.remoteId!) ?? (k ? queue.get(`${r.remoteId}_[${k}]`) : undefined);
        if (s) inQueue++;
        tasks[k] = { state: s ? mapSlurmState(s) : 'running', exitCode: null };
      }
      // Pending array tasks show as 123_[0-3]: count them as pending.
      if (r.array && !inQueue && [...queue.keys()].some((id) => id.startsWith(`${r.remoteId}_[`))) {
        for (const k of taskKeys(r)) tasks[k] = { state: 'pending', exitCode: null };
        inQueue = 1;
      }
      if (r.array && inQueue && inQueue < r.array) {
        // Some tasks already left the queue: settle them with the finished ones below.
        gone.push(r);
        continue;
      }
      if (inQueue) {
        if (applyTasks(r, tasks, 'squeue')) changed.push(r);
      } else gone.push(r);
    }
    if (gone.length) {
      const ids = gone.map((r) => r.remoteId!).join(',');
      const cmd = `sacct -n -P -X -j ${ids} -o JobID,State,ExitCode,ElapsedRaw,Start,End 2>/dev/null || echo __NO_SACCT__; echo __SCONTROL__; for j in ${gone.map((r) => r.remoteId).join(' ')}; do scontrol -o show job "$j" 2>/dev/null; done`;
      const out = text(await shell.exec(cmd, { timeoutMs: 60_000 }));
      const [acct, ctl] = out.split('__SCONTROL__\n');
      const fromAcct = /__NO_SACCT__/.test(acct ?? '') ? [] : parseSacct(acct ?? '');
      const fromCtl = parseScontrol(ctl ?? '');
      for (const r of gone) {
        const find = (list: SlurmTask[], k: string) => list.find((t) => t.id === (k ? `${r.remoteId}_${k}` : r.remoteId));
        const tasks: Record<string, TaskState> = {};
        let source = 'sacct';
        let elapsed = 0;
        for (const k of taskKeys(r)) {
          const inQ = queue.get(k ? `${r.remoteId}_${k}` : r.remoteId!);
          if (inQ) {
            tasks[k] = { state: mapSlurmState(inQ), exitCode: null };
            continue;
          }
          const t = find(fromAcct, k) ?? find(fromCtl, k);
          if (t && !find(fromAcct, k)) source = 'scontrol';
          // Left the queue but not final in accounting yet (completing): ask again next poll.
          tasks[k] = t ? { state: isFinal(t.state) ? t.state : 'running', exitCode: t.exitCode } : { state: 'lost', exitCode: null };
          elapsed = Math.max(elapsed, t?.elapsedSeconds ?? 0);
          if (t?.start && (!r.startedAt || t.start < r.startedAt)) r.startedAt = new Date(t.start).toISOString();
          if (t?.end && isFinal(t.state)) r.endedAt = new Date(t.end).toISOString();
        }
        if (Object.values(tasks).every((t) => isFinal(t.state))) r.elapsedSeconds = elapsed;
        if (Object.values(tasks).every((t) => t.state === 'lost')) source = 'squeue';
        if (applyTasks(r, tasks, source)) changed.push(r);
      }
    }
    return changed;
  }
  // local / ssh: the runner's pid, exit and cancelled files.
  const base = live[0]!.jobDir!.replace(/\/[^/]+$/, '');
  const ids = live.map((r) => shQuote(r.id)).join(' ');
  const cmd = `cd ${shQuote(base)} 2>/dev/null || exit 0; for d in ${ids}; do if [ -f "$d/cancelled" ]; then s=cancelled; elif [ -f "$d/exit" ]; then s="exit $(cat "$d/exit")"; elif [ -s "$d/pid" ] && kill -0 "$(cat "$d/pid")" 2>/dev/null; then s=running; else s=vanished; fi; printf '%s|%s|%s|%s\\n' "$d" "$s" "$(cat "$d/start" 2>/dev/null)" "$(cd "$d" && for f in exit.*; do [ -f "$f" ] && printf '%s=%s,' "\${f#exit.}" "$(cut -d' ' -f1 "$f")"; done)"; done`;
  const out = await must(shell, cmd, 'reading job states');
  for (const line of out.split('\n')) {
    const [id, status, start, taskExits] = line.split('|');
    const r = live.find((x) => x.id === id);
    if (!r || !status) continue;
    if (start && /^\d+$/.test(start.trim()) && !r.startedAt) r.startedAt = new Date(Number(start.trim()) * 1000).toISOString();
    const per = new Map((taskExits ?? '').split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
    const tasks: Record<string, TaskState> = {};
    let state: JobState;
    let code: number | null = null;
    if (status === 'cancelled') state = 'cancelled';
    else if (status.startsWith('exit ')) {
      const [c, end] = status.slice(5).trim().split(' ');
      code = Number(c);
      state = code === 0 ? 'completed' : code === 124 ? 'timeout' : 'failed';
      if (end && /^\d+$/.test(end)) r.endedAt = new Date(Number(end) * 1000).toISOString();
      if (r.startedAt && r.endedAt) r.elapsedSeconds = (Date.parse(r.endedAt) - Date.parse(r.startedAt)) / 1000;
    } else if (status === 'running') state = start ? 'running' : 'pending';
    else state = 'lost';
    for (const k of taskKeys(r)) {
      const tc = k ? per.get(k) : undefined;
      if (k && tc !== undefined) {
        const n = Number(tc);
        tasks[k] = { state: n === 0 ? 'completed' : n === 124 ? 'timeout' : 'failed', exitCode: n };
      } else tasks[k] = { state, exitCode: k ? null : code };
    }
    if (applyTasks(r, tasks, status.startsWith('exit') ? 'exit file' : status)) changed.push(r);
    if (state === 'cancelled' || state === 'lost') r.state = state;
  }
  return changed;
}

function logFile(r: JobRecord, task: string): string {
  return joinRemote(r.jobDir!, task ? `log.${task}` : 'log');
}

/** Reads the new bytes of the logs of every watched job in one command, framed by byte counts. */
async function readLogs(profile: NamedProfile, recs: JobRecord[], ws: Watcher[]): Promise<void> {
  const wanted: { r: JobRecord; task: string; w: Watcher[] }[] = [];
  for (const r of recs) {
    if (!r.jobDir || r.state === 'submitting') continue;
    const listeners = ws.filter((w) => w.id === r.id && w.opts.onLog);
    for (const follower of new Set(listeners.map((w) => w.follower))) {
      const same = listeners.filter((w) => w.follower === follower);
      for (const task of taskKeys(r)) wanted.push({ r, task, w: same });
    }
  }
  if (!wanted.length) return;
  const parts = wanted.map(({ r, task, w }, i) => {
    const f = shQuote(logFile(r, task));
    const off = r.logOffsets[w[0]!.follower]?.[task] ?? 0;
    return `s=$(stat -c %s ${f} 2>/dev/null || echo 0); n=$((s-${off})); [ $n -gt ${LOG_CHUNK} ] && n=${LOG_CHUNK}; [ $n -lt 0 ] && n=0; printf '@@%s %s\\n' ${i} $n; [ $n -gt 0 ] && tail -c +${off + 1} ${f} | head -c $n`;
  });
  const r = await shellOf(profile).exec(parts.join('; '), { timeoutMs: 60_000 });
  const buf = r.stdout;
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(10, at);
    if (nl === -1) break;
    const m = /^@@(\d+) (\d+)$/.exec(buf.subarray(at, nl).toString('latin1'));
    if (!m) break;
    const n = Number(m[2]);
    const body = buf.subarray(nl + 1, nl + 1 + n);
    at = nl + 1 + n;
    const want = wanted[Number(m[1])];
    if (!want || body.length !== n || !n) continue;
    const offsets = (want.r.logOffsets[want.w[0]!.follower] ??= {});
    offsets[want.task] = (offsets[want.task] ?? 0) + n;
    for (const w of want.w) {
      let d = w.decoders.get(want.task);
      if (!d) w.decoders.set(want.task, (d = new StringDecoder('utf8')));
      const t = d.write(body);
      if (t) w.opts.onLog!({ jobId: want.r.id, task: want.task, text: t });
    }
  }
}

/** The last lines of the logs of the job's failing tasks. */
async function logTail(profile: NamedProfile, r: JobRecord, lines = 30): Promise<string> {
  if (!r.jobDir) return '';
  const keys = taskKeys(r).filter((k) => !r.array || r.tasks[k]?.state !== 'completed').slice(0, 4);
  const cmd = keys.map((k) => `${r.array ? `echo '==> task ${k}'; ` : ''}tail -n ${lines} ${shQuote(logFile(r, k))} 2>/dev/null`).join('; ');
  try {
    return text(await shellOf(profile).exec(cmd || 'true', { timeoutMs: 30_000 })).slice(-8000);
  } catch {
    return '';
  }
}

async function finalize(profile: NamedProfile, r: JobRecord): Promise<void> {
  r.failure = classifyFailure(r, await logTail(profile, r));
  if (r.failure && r.failure.reason !== r.state) r.state = r.failure.reason;
}

/** Refreshes the records of many jobs with one poll per profile (what `job list` shows). */
export async function refreshJobs(records: JobRecords, ids?: string[]): Promise<JobRecord[]> {
  const all = records.list().filter((r) => !ids || ids.includes(r.id));
  const byProfile = new Map<string, JobRecord[]>();
  for (const r of all) if (!isFinal(r.state) && r.remoteId) byProfile.set(JSON.stringify(r.profile), [...(byProfile.get(JSON.stringify(r.profile)) ?? []), r]);
  for (const list of byProfile.values()) {
    const changed = await pollStates(list[0]!.profile, list);
    for (const r of changed) {
      if (isFinal(r.state) && r.state !== 'completed') await finalize(r.profile, r);
      records.save(r);
    }
  }
  return records.list().filter((r) => !ids || ids.includes(r.id));
}

/** Cancels a job (scancel; for detached jobs, TERM to its process group). A final job is left as it is. */
export async function cancelJob(id: string, opts: { records?: JobRecords } = {}): Promise<JobRecord> {
  const records = opts.records ?? recordsFor(null);
  const r = records.require(id);
  if (isFinal(r.state)) return r;
  if (!r.remoteId) throw new JobError(`job ${id} has not reached the cluster yet (state ${r.state}); submit it again with its key, then cancel`);
  const shell = shellOf(r.profile);
  if (r.profile.kind === 'slurm') await must(shell, shJoin(['scancel', r.remoteId]), `scancel ${r.remoteId}`);
  else {
    // TERM to the runner's process group, KILL to what is left after 5 s.
    const g = `-${r.remoteId}`;
    // (`kill -SIG -PGID`, without "--": the form dash and bash both read.)
    await must(shell, `cd ${shQuote(r.jobDir!)} && : > cancelled && kill -TERM ${g} 2>/dev/null; i=0; while kill -0 ${g} 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; kill -KILL ${g} 2>/dev/null; true`, `cancelling ${id}`);
  }
  return r;
}

interface RemoteFile {
  path: string;
  size: number;
  sha256: string;
}

async function listOutputs(shell: Shell, r: JobRecord): Promise<RemoteFile[]> {
  if (!r.outputs.length) return [];
  const cmd = `cd ${shQuote(r.jobDir!)} && for o in ${r.outputs.map(shQuote).join(' ')}; do [ -e "$o" ] && find "$o" -type f -print0; done | xargs -0 -r sh -c 'for f; do printf "%s\\0%s\\0%s\\0" "$f" "$(stat -c %s "$f")" "$(sha256sum < "$f" | cut -c1-64)"; done' _`;
  const out = await shell.exec(cmd, { timeoutMs: 300_000 });
  if (out.code !== 0) throw new JobError(`listing the outputs of ${r.id} failed: ${out.stderr.trim()}`);
  const f = out.stdout.toString('utf8').split('\0');
  const files: RemoteFile[] = [];
  for (let i = 0; i + 2 < f.length; i += 3) files.push({ path: f[i]!.replace(/^\.\//, ''), size: Number(f[i + 1]), sha256: f[i + 2]! });
  return files;
}

function localHash(file: string, size: number): string | null {
  try {
    if (statSync(file).size < size) return null;
    return createHash('sha256').update(readFileSync(file).subarray(0, size)).digest('hex');
  } catch {
    return null;
  }
}

let rsyncHere: boolean | null = null;
function pipe(cmd: string, args: string[], input: Buffer | string | null, cwd?: string): Promise<{ code: number; stderr: string; stdout: Buffer }> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd });
    const out: Buffer[] = [];
    let err = '';
    c.stdout.on('data', (b: Buffer) => out.push(b));
    c.stderr.on('data', (b: Buffer) => (err += b.toString()));
    c.on('error', (e) => resolve({ code: 127, stderr: e.message, stdout: Buffer.alloc(0) }));
    c.on('close', (code) => resolve({ code: code ?? 1, stderr: err, stdout: Buffer.concat(out) }));
    c.stdin.on('error', () => undefined);
    c.stdin.end(input ?? '');
  });
}

export interface FetchResult {
  /** fetched: copied this time (new, grown, or a local copy that did not verify); unchanged: already here, verified. */
  files: (RemoteFile & { status: 'fetched' | 'unchanged' })[];
  transport: 'rsync' | 'tar';
  /** Rollouts imported into the store, when one was given. */
  imported?: number;
}

/**
 * Copies the job's outputs into localDir (rsync when both ends have it, else tar over the
 * same connection), skipping files already here with the same size and hash, and verifies
 * each file against the size and sha256 measured on the target. While the job runs, a file
 * still growing is kept at the size listed (its complete lines import now, the rest next
 * time). With `store`, imports what was fetched (incrementally: the store resumes a file).
 */
/** What fetchOutputs imports into: a RolloutStore (structurally, so this module does not load DuckDB). */
export interface FetchStore {
  import(paths: string[], o: { run?: string; version?: string | null }): Promise<{ rollouts: number }>;
}

export async function fetchOutputs(id: string, localDir: string, opts: { records?: JobRecords; store?: FetchStore; transport?: 'rsync' | 'tar' } = {}): Promise<FetchResult> {
  const records = opts.records ?? recordsFor(null);
  const r = records.require(id);
  if (!r.jobDir) throw new JobError(`job ${id} has not reached the cluster yet (state ${r.state})`);
  const shell = shellOf(r.profile);
  mkdirSync(localDir, { recursive: true });
  const remote = await listOutputs(shell, r);
  for (const f of remote) if (path.isAbsolute(f.path) || f.path.split('/').includes('..')) throw new JobError(`refusing output path ${JSON.stringify(f.path)} of ${id}`);
  const need = remote.filter((f) => localHash(path.join(localDir, f.path), f.size) !== f.sha256 || statSync(path.join(localDir, f.path)).size !== f.size);
  const copied = new Set(need.map((f) => f.path));
  if (rsyncHere === null) rsyncHere = (await pipe('sh', ['-c', 'command -v rsync'], null)).code === 0;
  const rsyncThere = opts.transport !== 'tar' && rsyncHere && (shell.kind === 'local' || (await shell.exec('command -v rsync >/dev/null')).code === 0);
  if (opts.transport === 'rsync' && !rsyncThere) throw new JobError(`rsync is missing ${rsyncHere ? 'on the host' : 'here'}; install it, or fetch with tar`);
  const transport = rsyncThere ? 'rsync' : 'tar';
  for (let attempt = 0; attempt < 2 && need.length; attempt++) {
    const list = Buffer.from(need.map((f) => `${f.path}\0`).join(''));
    if (transport === 'rsync') {
      const ssh = shell.sshArgv();
      const src = `${shell.target}${r.jobDir}/`;
      const args = ['-a', '--ignore-times', '--partial', '--inplace', '--from0', '--files-from=-', ...(ssh ? ['-e', shJoin(ssh), '--protect-args'] : []), src, `${localDir}/`];
      const res = await pipe('rsync', args, list);
      if (res.code !== 0 && res.code !== 24) throw new JobError(`rsync of ${id}'s outputs failed (exit ${res.code}): ${res.stderr.trim().split('\n').slice(-3).join(' / ')}; run \`evotrainer job fetch ${id}\` again to resume`);
    } else {
      const res = await shell.exec(`cd ${shQuote(r.jobDir)} && tar -cf - --null -T -`, { input: list, timeoutMs: 600_000 });
      if (res.code !== 0) throw new JobError(`tar of ${id}'s outputs failed: ${res.stderr.trim()}`);
      const x = await pipe('tar', ['-xf', '-', '-C', localDir], res.stdout);
      if (x.code !== 0) throw new JobError(`unpacking ${id}'s outputs failed: ${x.stderr.trim()}`);
    }
    // Verify; a file that grew since it was listed keeps the listed size (a consistent prefix).
    for (let i = need.length - 1; i >= 0; i--) {
      const f = need[i]!;
      const local = path.join(localDir, f.path);
      if (existsSync(local) && statSync(local).size > f.size && localHash(local, f.size) === f.sha256) truncateSync(local, f.size);
      if (localHash(local, f.size) === f.sha256 && statSync(local).size === f.size) need.splice(i, 1);
    }
  }
  if (need.length) throw new JobError(`${need.length} output file(s) of ${id} did not verify (size and sha256 differ from the target's): ${need.map((f) => f.path).slice(0, 5).join(', ')}; run the fetch again`);
  const fetched: FetchResult['files'] = remote.map((f) => ({ ...f, status: copied.has(f.path) ? 'fetched' : 'unchanged' }));
  const latest = records.require(id);
  for (const f of remote) latest.fetched[f.path] = { size: f.size, sha256: f.sha256 } satisfies FetchedFile;
  records.save(latest);
  const result: FetchResult = { files: fetched, transport };
  if (opts.store) {
    const roots = [...new Set(r.outputs.map((o) => path.join(localDir, o)))].filter((p) => existsSync(p));
    if (roots.length) result.imported = (await opts.store.import(roots, { run: r.run ?? r.id, version: r.version })).rollouts;
  }
  return result;
}

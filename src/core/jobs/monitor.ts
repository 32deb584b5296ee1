import { StringDecoder } from 'node:string_decoder';
import { pollMs, type NamedProfile } from './profile';
import { joinRemote, shJoin, shQuote } from './quote';
import { isFinal, JobRecords, type JobRecord, type JobState, type TaskState } from './records';
import { SshError, text } from './shell';
import { classifyFailure, combineStates, mapSlurmState, parseSacct, parseScontrol, parseSqueue, type SlurmTask } from './slurm';
import { JobError, must, recordsFor, shellOf } from './connection';
import { fetchOutputs, type FetchResult, type FetchStore } from './fetch';

/** Following jobs: one status poll and one log read per profile and interval, the final state with its failure, cancel. */

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

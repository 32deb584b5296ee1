import type { JobFailure, JobRecord, JobState } from './records';

/** Parsers of Slurm's own output (squeue, sacct, scontrol) and the failure classification. */

export interface SlurmTask {
  /** "123" or "123_4" (array task). */
  id: string;
  state: JobState;
  raw: string;
  exitCode: number | null;
  elapsedSeconds: number | null;
  start: string | null;
  end: string | null;
}

export function mapSlurmState(raw: string): JobState {
  const s = raw.trim().split(/\s+/)[0]!.toUpperCase().replace(/\+$/, '');
  switch (s) {
    case 'PENDING':
    case 'CONFIGURING':
    case 'REQUEUED':
    case 'REQUEUE_HOLD':
    case 'REQUEUE_FED':
    case 'RESV_DEL_HOLD':
      return 'pending';
    case 'RUNNING':
    case 'COMPLETING':
    case 'SUSPENDED':
    case 'STAGE_OUT':
    case 'SIGNALING':
    case 'STOPPED':
    case 'RESIZING':
      return 'running';
    case 'COMPLETED':
      return 'completed';
    case 'CANCELLED':
    case 'REVOKED':
      return 'cancelled';
    case 'TIMEOUT':
    case 'DEADLINE':
      return 'timeout';
    case 'OUT_OF_MEMORY':
      return 'oom';
    case 'NODE_FAIL':
    case 'BOOT_FAIL':
      return 'node_fail';
    default:
      return 'failed'; // FAILED, PREEMPTED, SPECIAL_EXIT, …
  }
}

/** `squeue -h -r -o '%i|%T'`: job (or array task) id → state. */
export function parseSqueue(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [id, state] = line.trim().split('|');
    if (id && state) m.set(id, state);
  }
  return m;
}

const exitOf = (s: string | undefined): number | null => {
  const m = /^(\d+):(\d+)$/.exec(s ?? '');
  if (!m) return null;
  return Number(m[2]) ? 128 + Number(m[2]) : Number(m[1]);
};
const dateOf = (s: string | undefined): string | null => (s && /^\d{4}-\d\d-\d\dT/.test(s) ? s : null);

/** `sacct -n -P -X -o JobID,State,ExitCode,ElapsedRaw,Start,End`. */
export function parseSacct(text: string): SlurmTask[] {
  const out: SlurmTask[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split('|');
    if (f.length < 3 || !/^\d+(_\d+)?$/.test(f[0]!)) continue;
    out.push({ id: f[0]!, raw: f[1]!, state: mapSlurmState(f[1]!), exitCode: exitOf(f[2]), elapsedSeconds: f[3] && /^\d+$/.test(f[3]) ? Number(f[3]) : null, start: dateOf(f[4]), end: dateOf(f[5]) });
  }
  return out;
}

const seconds = (s: string | undefined): number | null => {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(s ?? '');
  if (!m) return null;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3]) * 60 + Number(m[4]);
};

/** `scontrol -o show job ID` (one line per job or array task). */
export function parseScontrol(text: string): SlurmTask[] {
  const out: SlurmTask[] = [];
  for (const line of text.split('\n')) {
    if (!/JobId=/.test(line)) continue;
    const kv = new Map<string, string>();
    for (const m of line.matchAll(/(?:^|\s)([A-Za-z:/]+)=(\S*)/g)) if (!kv.has(m[1]!)) kv.set(m[1]!, m[2]!);
    const arrayJob = kv.get('ArrayJobId');
    const task = kv.get('ArrayTaskId');
    const id = arrayJob && task && /^\d+$/.test(task) ? `${arrayJob}_${task}` : kv.get('JobId')!;
    const raw = kv.get('JobState') ?? 'UNKNOWN';
    out.push({ id, raw, state: mapSlurmState(raw), exitCode: exitOf(kv.get('ExitCode')), elapsedSeconds: seconds(kv.get('RunTime')), start: dateOf(kv.get('StartTime')), end: dateOf(kv.get('EndTime')) });
  }
  return out;
}

const OOM_LOG = /out of memory|outofmemoryerror|oom[- ]kill|cuda out of memory|memory cgroup out of memory|oom_kill/i;

/** The combined state of a job from its tasks: any failure wins, in order of how actionable it is. */
export function combineStates(states: JobState[]): JobState {
  if (!states.length) return 'lost';
  const live = states.filter((s) => s === 'running' || s === 'pending' || s === 'submitting');
  if (live.length) return live.length < states.length || live.includes('running') ? 'running' : 'pending';
  for (const s of ['node_fail', 'oom', 'timeout', 'failed', 'lost', 'cancelled'] as const) if (states.includes(s)) return s;
  return 'completed';
}

/** The failure of a finished job: reason, one-line message, log tail and what to do next. */
export function classifyFailure(r: Pick<JobRecord, 'state' | 'exitCode' | 'tasks' | 'jobDir' | 'remoteId' | 'profile'>, logTail: string): JobFailure | null {
  let reason = r.state;
  if (reason === 'completed' || reason === 'running' || reason === 'pending' || reason === 'submitting') return null;
  if (reason === 'failed' && (r.exitCode === 137 || OOM_LOG.test(logTail))) reason = 'oom';
  const failedTasks = Object.entries(r.tasks).filter(([, t]) => t.state !== 'completed').map(([k, t]) => `${k} (${t.state}${t.exitCode !== null ? `, exit ${t.exitCode}` : ''})`);
  const where = `${r.profile.name}${r.remoteId ? ` job ${r.remoteId}` : ''}`;
  const tasks = failedTasks.length && Object.keys(r.tasks).length > 1 ? `; failed task(s): ${failedTasks.join(', ')}` : '';
  const sbatch = r.profile.kind === 'slurm';
  const table: Record<typeof reason, [string, string]> = {
    failed: [`${where} failed${r.exitCode !== null ? ` with exit code ${r.exitCode}` : ''}${tasks}`, 'Read the log tail for the error, fix the script or the harness, then submit again.'],
    oom: [`${where} ran out of memory${tasks}`, sbatch ? 'Raise sbatch.mem in the profile (or lower the batch size), then submit again.' : 'Lower the batch size or use a host with more memory, then submit again.'],
    timeout: [`${where} hit its time limit${tasks}`, sbatch ? 'Raise sbatch.time in the profile (or timeout_minutes of the job), or resume from the last checkpoint.' : 'Raise timeout_minutes of the job, or resume from the last checkpoint.'],
    node_fail: [`${where}: a node failed${tasks}`, 'Submit again; if the same node fails twice, exclude it (sbatch.extra: ["--exclude=NODE"]) and tell the cluster admins.'],
    cancelled: [`${where} was cancelled${tasks}`, 'Submit again if the cancel was not intended.'],
    lost: [`${where} vanished from the queue without a final state${tasks}`, `Check ${r.jobDir ?? 'the job directory'} on the host (log, exit file) and the cluster's accounting; then submit again.`],
  };
  const [message, nextStep] = table[reason];
  return { reason, message, logTail, nextStep };
}

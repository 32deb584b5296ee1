import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { NamedProfile } from './profile';

export type JobState = 'submitting' | 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'timeout' | 'oom' | 'node_fail' | 'lost';

export const FINAL_STATES: readonly JobState[] = ['completed', 'failed', 'cancelled', 'timeout', 'oom', 'node_fail', 'lost'];
export const isFinal = (s: JobState) => FINAL_STATES.includes(s);

export interface JobFailure {
  reason: Exclude<JobState, 'submitting' | 'pending' | 'running' | 'completed'>;
  message: string;
  /** The last lines of the job's log (or of the failing tasks' logs). */
  logTail: string;
  nextStep: string;
}

export interface TaskState {
  state: JobState;
  exitCode: number | null;
}

export interface FetchedFile {
  size: number;
  sha256: string;
}

export interface JobRecord {
  id: string;
  /** The caller's idempotency key, e.g. "train:v7": a second submit with it returns this job. */
  key: string | null;
  profile: NamedProfile;
  harness: string | null;
  commit: string | null;
  version: string | null;
  run: string | null;
  template: string;
  vars: Record<string, string>;
  /** Number of array tasks (Slurm --array=0-(N-1)); null for a single task. */
  array: number | null;
  /** Paths relative to the job directory copied back by fetchOutputs. */
  outputs: string[];
  /** Absolute job directory on the target (job.sh, log, outputs). */
  jobDir: string | null;
  /** Absolute directory the script starts in (the commit's worktree, else the job directory). */
  workDir: string | null;
  /** Slurm job id, or the pid of the detached runner. */
  remoteId: string | null;
  state: JobState;
  tasks: Record<string, TaskState>;
  exitCode: number | null;
  submittedAt: string;
  startedAt: string | null;
  endedAt: string | null;
  elapsedSeconds: number | null;
  gpus: number;
  /** elapsed × gpus, in hours (what budgets count). */
  gpuHours: number | null;
  /**
   * Bytes of each log already delivered, by follower (e.g. "cli", "editor") and task ("" for
   * a single task): a follow by the same follower resumes there, after a restart or a
   * dropped connection; each follower sees every byte once.
   */
  logOffsets: Record<string, Record<string, number>>;
  failure: JobFailure | null;
  fetched: Record<string, FetchedFile>;
  /** Where the final state came from: squeue/sacct/scontrol/exit file. */
  source: string | null;
  updatedAt: string;
}

const keyFile = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 32);

/**
 * Job records, one JSON file each, written atomically (temp file + rename). Idempotency keys
 * are claimed with an exclusive create, so two processes submitting the same key get one
 * job between them.
 */
export class JobRecords {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = path.resolve(dir);
    mkdirSync(path.join(this.dir, 'keys'), { recursive: true });
  }

  static newId(): string {
    const t = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
    return `j${t}-${randomBytes(3).toString('hex')}`;
  }

  private file(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`"${id}" is not a job id (see \`evotrainer job list\`)`);
    return path.join(this.dir, `${id}.json`);
  }

  get(id: string): JobRecord | null {
    const f = this.file(id);
    if (!existsSync(f)) return null;
    return JSON.parse(readFileSync(f, 'utf8')) as JobRecord;
  }

  require(id: string): JobRecord {
    const r = this.get(id);
    if (!r) throw new Error(`no job "${id}" in ${this.dir} (see \`evotrainer job list\`)`);
    return r;
  }

  save(r: JobRecord): JobRecord {
    r.updatedAt = new Date().toISOString();
    const f = this.file(r.id);
    const tmp = `${f}.${process.pid}.${randomBytes(3).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify(r, null, 2));
    renameSync(tmp, f);
    return r;
  }

  /** The job holding `key`, if any. */
  byKey(key: string): JobRecord | null {
    try {
      const id = readFileSync(path.join(this.dir, 'keys', keyFile(key)), 'utf8').trim();
      return id ? this.get(id) : null;
    } catch {
      return null;
    }
  }

  /** Claims `key` for `id`; returns the id already holding it when there is one. */
  claimKey(key: string, id: string): string | null {
    const f = path.join(this.dir, 'keys', keyFile(key));
    try {
      const fd = openSync(f, 'wx');
      writeSync(fd, id);
      closeSync(fd);
      return null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      for (let i = 0; i < 50; i++) {
        const held = readFileSync(f, 'utf8').trim();
        if (held) return held;
      }
      return readFileSync(f, 'utf8').trim() || null;
    }
  }

  list(): JobRecord[] {
    const out: JobRecord[] = [];
    for (const n of readdirSync(this.dir)) {
      if (!n.endsWith('.json')) continue;
      try {
        out.push(JSON.parse(readFileSync(path.join(this.dir, n), 'utf8')) as JobRecord);
      } catch {
        /* a record being replaced: the rename makes this rare; skip it this time */
      }
    }
    return out.sort((a, b) => a.submittedAt.localeCompare(b.submittedAt) || a.id.localeCompare(b.id));
  }
}

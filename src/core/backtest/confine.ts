import { spawn } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * What the harness code a backtest runs on this machine gets (`--trust` means "run it", not
 * "run it with everything"):
 *
 * - a scrubbed environment: only the variables named in ENV_ALLOW (and the locale's LC_*)
 *   pass; HOME and TMPDIR point into the worker's scratch folder. API keys, tokens, cloud
 *   credentials and the rest of the user's environment do not reach it;
 * - where Linux permits `unshare` (as root, or in an unprivileged user namespace): no
 *   network (a network namespace of its own), a PID namespace of its own (no other process
 *   to signal), and a mount namespace of its own in which every mount is read-only except
 *   the version's tree copy and the scratch folder — the harness checkout, the home folder
 *   and the rest of the machine cannot be written — with every capability dropped, so that
 *   nothing can be remounted read-write again;
 * - its memory cap (RLIMIT_AS, the manifest's `backtest.memory_mb`) and no core files.
 *
 * Where `unshare` is not permitted (or EVOTRAINER_BACKTEST_UNSHARE=0), the worker runs with the
 * scrubbed environment only, and the backtest report says so.
 */
export const ENV_ALLOW = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'PYTHONPATH', 'VIRTUAL_ENV', 'CONDA_PREFIX', 'CONDA_DEFAULT_ENV'];

/** The environment harness code runs with: the allow-list's variables, HOME and TMPDIR in `scratch`. */
export function scrubbedEnv(scratch: string, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) if (v !== undefined && (ENV_ALLOW.includes(k) || k.startsWith('LC_'))) env[k] = v;
  return { ...env, HOME: scratch, TMPDIR: scratch, PYTHONDONTWRITEBYTECODE: '1', PYTHONNOUSERSITE: '1' };
}

export interface WorkerIsolation {
  /** Harness code cannot reach the network. */
  network: boolean;
  /** Harness code can write only its tree copy and scratch folder. */
  readOnlyRoot: boolean;
  environment: 'scrubbed';
  /** Prepended to the worker's command line. */
  prefix: string[];
  /** One line for the report. */
  detail: string;
}

const cache = new Map<string, Promise<WorkerIsolation>>();

const cacheKey = (python: string, worker: string) => `${python}\u0000${worker}\u0000${process.env.EVOTRAINER_BACKTEST_UNSHARE ?? ''}`;

/** The two ways to start a confined worker: as root, or in a user namespace of its own. */
const ISOLATE = ['--mount', '--net', '--pid', '--fork', '--kill-child'];
const PREFIXES = [['unshare', ...ISOLATE], ['unshare', '--user', '--map-root-user', ...ISOLATE]];

const unconfined = (why: string): WorkerIsolation => ({ network: false, readOnlyRoot: false, environment: 'scrubbed', prefix: [], detail: `harness code ran WITHOUT network or filesystem confinement (${why}); scrubbed environment (${ENV_ALLOW.join(', ')}, LC_*)` });
const confined = (prefix: string[]): WorkerIsolation => ({ network: true, readOnlyRoot: true, environment: 'scrubbed', prefix, detail: `harness code ran with no network, a read-only filesystem except its tree copy and scratch folder, and a scrubbed environment (${ENV_ALLOW.join(', ')}, LC_*)` });

/** Without trying: no confinement possible here (turned off, or no mount namespaces), and why. */
function unconfinedHere(): WorkerIsolation | null {
  if (process.env.EVOTRAINER_BACKTEST_UNSHARE === '0') return unconfined('EVOTRAINER_BACKTEST_UNSHARE=0');
  if (!mountNamespace()) return unconfined('no mount namespaces on this platform');
  return null;
}

/** This process's mount namespace: the worker never remounts anything in it. */
export function mountNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/mnt');
  } catch {
    return '';
  }
}

function exitCode(cmd: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
    const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.on('error', (err) => {
      clearTimeout(t);
      resolve({ code: null, stderr: err.message });
    });
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stderr: stderr.trim() });
    });
  });
}

/**
 * The confinement this machine allows for `python` running `worker`, found once per
 * interpreter by the worker's own probe (`--probe DIR`: inside the namespaces, DIR is
 * writable, its parent is not, and no connection leaves).
 */
export function workerIsolation(python: string, worker: string): Promise<WorkerIsolation> {
  const key = cacheKey(python, worker);
  let found = cache.get(key);
  if (!found) {
    found = probe(python, worker);
    cache.set(key, found);
  }
  return found;
}

/**
 * For workers that start before (or without) the probe: the confinement found for `python`
 * running `worker` (`known`), or else the one this machine most likely allows (`likely`: as
 * root, namespaces of its own; otherwise, in a user namespace too). A worker started with
 * `likely` confines itself and checks what the probe checks (worker.py's `confined`) before
 * any harness code loads, or exits; once workers have started with it, `confirm` records it
 * as found (the probe need not run). Should they fail, `workerIsolation` finds what holds.
 */
export function startingIsolation(python: string, worker: string): { known: Promise<WorkerIsolation> } | { likely: WorkerIsolation; confirm(): void } {
  const key = cacheKey(python, worker);
  const known = cache.get(key);
  if (known) return { known };
  const likely = unconfinedHere() ?? confined(process.getuid?.() === 0 ? PREFIXES[0]! : PREFIXES[1]!);
  return { likely, confirm: () => void (cache.has(key) || cache.set(key, Promise.resolve(likely))) };
}

/** Whether two findings confine the same way (the same command line). */
export const sameIsolation = (a: WorkerIsolation, b: WorkerIsolation): boolean => a.readOnlyRoot === b.readOnlyRoot && a.prefix.join('\u0000') === b.prefix.join('\u0000');

/**
 * How to run harness code confined (as far as `isolation` allows) with `scratch` (its HOME and
 * TMPDIR) and `writable` its only writable folders: the worker's confinement config (for
 * worker.py's JSON config — a worker checks on `scratch` that it holds —, or its `--script`
 * mode) and the environment to start it with.
 */
export function confinement(isolation: WorkerIsolation, scratch: string, writable: string[]): { confine: Record<string, unknown>; env: Record<string, string> } {
  const confine = isolation.readOnlyRoot ? { writable: [...writable, scratch], outer_mount_namespace: mountNamespace(), check: scratch } : {};
  return { confine, env: scrubbedEnv(scratch) };
}

async function probe(python: string, worker: string): Promise<WorkerIsolation> {
  const none = unconfinedHere();
  if (none) return none;
  const outer = mountNamespace();
  const dir = mkdtempSync(path.join(tmpdir(), 'evotrainer-confine-probe-'));
  try {
    const env = scrubbedEnv(dir);
    const tries: string[] = [];
    for (const prefix of PREFIXES) {
      const r = await exitCode([...prefix, python, worker, '--probe', dir, outer], env);
      if (r.code === 0) return confined(prefix);
      tries.push(`${prefix.join(' ')}: ${r.stderr.split('\n').pop() || `exit ${r.code}`}`);
    }
    return unconfined(`unshare is not permitted here — ${tries.join('; ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import path from 'node:path';
import type { NamedProfile } from './profile';
import { JobRecords } from './records';
import { shellFor, text, type Shell } from './shell';

/** What submit, monitor and fetch share: one shell per profile, a command that must succeed, the job records. */

export class JobError extends Error {}

/** One shell per profile and process: the shared ssh connection, and the counters the benchmark prints. */
const shells = new Map<string, Shell>();
export function shellOf(profile: NamedProfile): Shell {
  const k = JSON.stringify([profile.name, profile.kind, profile.host, profile.ssh_config, profile.setup]);
  let s = shells.get(k);
  if (!s) shells.set(k, (s = shellFor(profile)));
  return s;
}

export async function must(shell: Shell, command: string, what: string, input?: string | Buffer): Promise<string> {
  const r = await shell.exec(command, { input, timeoutMs: 120_000 });
  if (r.code !== 0) throw new JobError(`${what} failed on ${shell.target.replace(/:$/, '') || 'this machine'} (exit ${r.code}): ${(r.stderr.trim() || text(r).trim()).split('\n').slice(-5).join(' / ')}`);
  return text(r);
}

export function recordsFor(harness: string | null | undefined, records?: JobRecords): JobRecords {
  if (records) return records;
  const dir = process.env.EVOTRAINER_JOBS_DIR ?? path.join(harness ?? process.cwd(), '.evotrainer', 'jobs');
  return new JobRecords(dir);
}

import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { shJoin, shQuote } from './quote';
import { JobRecords, type FetchedFile, type JobRecord } from './records';
import type { Shell } from './shell';
import { JobError, recordsFor, shellOf } from './connection';

/** Fetching a job's outputs: rsync (else tar over the connection), verified by size and sha256, optionally imported into the store. */

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

import { execFile, spawn } from 'node:child_process';

/**
 * The user's git, run without a shell: every argument travels as an array element, so
 * branch names, paths and messages with spaces, quotes, `$()`, `;` or unicode stay inert.
 * Unlike `util/exec.run` it can feed stdin (fast-import, cat-file --batch, hash-object)
 * and has no output cap: a ledger of 1,000 versions is read in one batch.
 */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
    readonly cwd: string,
  ) {
    const first = result.stderr.trim().split('\n').find(Boolean) ?? `exit ${result.code}`;
    super(`git ${args.slice(0, 3).join(' ')} failed in ${cwd}: ${first}`);
  }
}

export interface GitOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** Resolve with the non-zero result instead of throwing. */
  allowFail?: boolean;
}

export const ZERO_OID = '0'.repeat(40);

/** Keeps git's messages in English so callers can recognise them, and never prompts. */
const baseEnv = (): NodeJS.ProcessEnv => ({ ...process.env, LC_ALL: 'C', LANGUAGE: 'C', GIT_TERMINAL_PROMPT: '0' });

export function git(cwd: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args as string[], { cwd, env: { ...baseEnv(), ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new Error(`cannot run git (${(e as NodeJS.ErrnoException).code ?? e.message}); install git and check PATH (see \`evotrainer doctor\`)`)));
    child.on('close', (code) => {
      const result = { code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
      if (result.code !== 0 && !opts.allowFail) reject(new GitError(args, result, cwd));
      else resolve(result);
    });
    child.stdin.on('error', () => undefined); // git may exit before reading all input; its exit code says why
    child.stdin.end(opts.input ?? '');
  });
}

/** stdout as bytes (binary-safe), or null when git fails. */
export function gitBytes(cwd: string, args: readonly string[]): Promise<Buffer | null> {
  return new Promise((resolve) => {
    execFile('git', args as string[], { cwd, env: baseEnv(), encoding: 'buffer', maxBuffer: 1 << 30 }, (err, stdout) => resolve(err ? null : stdout));
  });
}

/** stdout with the trailing newline removed. */
export async function gitOut(cwd: string, args: readonly string[], opts: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, opts)).stdout.replace(/\n$/, '');
}

/** The object a rev resolves to, or null (no throw) when it does not exist. */
export async function revParse(cwd: string, rev: string): Promise<string | null> {
  const r = await git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{object}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * Moves a ref only if it still points where we last saw it (compare-and-swap): a
 * concurrent writer makes this fail instead of being silently overwritten.
 * `expected` ZERO_OID means "must not exist yet".
 */
export async function casRef(cwd: string, ref: string, next: string, expected: string, reason: string): Promise<boolean> {
  const r = await git(cwd, ['update-ref', '-m', reason, ref, next, expected], { allowFail: true });
  return r.code === 0;
}

/**
 * Reads many objects in one `git cat-file --batch` process: the read path of the
 * lineage (one process for 1,000 ledger files instead of 1,000).
 */
export async function catFileBatch(cwd: string, objects: readonly string[]): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>();
  if (!objects.length) return result;
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd, env: baseEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`git cat-file --batch exited ${code} in ${cwd}`))));
    child.stdin.end(objects.join('\n') + '\n');
  });
  let pos = 0;
  for (const name of objects) {
    const nl = raw.indexOf(10, pos);
    const header = raw.subarray(pos, nl).toString('utf8');
    pos = nl + 1;
    if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
      result.set(name, null);
      continue;
    }
    const size = Number(header.slice(header.lastIndexOf(' ') + 1));
    result.set(name, raw.subarray(pos, pos + size).toString('utf8'));
    pos += size + 1;
  }
  return result;
}

export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  name: string;
}

export async function lsTree(cwd: string, treeish: string): Promise<TreeEntry[]> {
  const r = await git(cwd, ['ls-tree', '-z', treeish], { allowFail: true });
  if (r.code !== 0) return [];
  return r.stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode = '', type = '', oid = ''] = line.slice(0, tab).split(' ');
      return { mode, type, oid, name: line.slice(tab + 1) };
    });
}

export async function mktree(cwd: string, entries: readonly TreeEntry[]): Promise<string> {
  const input = entries.map((e) => `${e.mode} ${e.type} ${e.oid}\t${e.name}\0`).join('');
  return gitOut(cwd, ['mktree', '-z'], { input });
}

export async function hashObject(cwd: string, content: string | Buffer): Promise<string> {
  return gitOut(cwd, ['hash-object', '-w', '--stdin'], { input: content });
}

/** Commit metadata for commits the engine writes itself (ledger entries). */
export function engineIdentity(): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME ?? 'EvoTrainer',
    GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL ?? 'evotrainer@localhost.invalid',
    GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME ?? 'EvoTrainer',
    GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL ?? 'evotrainer@localhost.invalid',
  };
}

/** Trailers (`Key: value` lines of the last paragraph) of a commit message. */
export function parseTrailers(message: string): Record<string, string> {
  const paragraphs = message.trimEnd().split(/\n\s*\n/);
  const last = paragraphs[paragraphs.length - 1] ?? '';
  const out: Record<string, string> = {};
  if (paragraphs.length < 2) return out;
  for (const line of last.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s?(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** One line, no control characters: safe as a trailer value or a subject. */
export function oneLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
}

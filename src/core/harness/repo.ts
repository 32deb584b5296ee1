import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, gitOut } from './git';
import { MANIFEST_FILE, parseManifest, type Manifest } from './manifest';

/**
 * An open harness repository. `root` is the main checkout (where `skills/` and
 * `.evotrainer/` live); `cwd` is the checkout the command ran in, which may be a version
 * worktree under `.evotrainer/worktrees/`. Refs and the ledger are shared by all of them.
 */
export interface Harness {
  root: string;
  cwd: string;
  gitDir: string;
  commonDir: string;
  /** Extra environment for commits: the user's identity, or a fallback when git has none. */
  commitEnv: NodeJS.ProcessEnv;
  /** Who is acting, for the ledger. */
  actor: string;
  /** Told about each interrupted operation `reconcile` completes (the CLI prints them). */
  onRepair?: (message: string) => void;
}

export const EVO_PREFIX = 'refs/heads/evo/';
export const PROMOTED_REF = 'refs/heads/evo/promoted';
export const LEDGER_REF = 'refs/heads/evo/ledger';
export const WORKTREES_DIR = path.join('.evotrainer', 'worktrees');

export class HarnessError extends Error {}

export async function openHarness(dir: string): Promise<Harness> {
  const abs = path.resolve(dir);
  if (!existsSync(abs)) throw new HarnessError(`${abs} does not exist; create a harness with \`evotrainer init DIR\``);
  const r = await git(abs, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'], { allowFail: true });
  if (r.code !== 0) throw new HarnessError(`${abs} is not inside a git repository; create a harness with \`evotrainer init DIR\` or pass --harness DIR`);
  const [cwd = abs, gitDir = '', commonDir = ''] = r.stdout.trim().split('\n');
  const root = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : cwd;
  const [name, email] = await Promise.all([
    git(abs, ['config', 'user.name'], { allowFail: true }),
    git(abs, ['config', 'user.email'], { allowFail: true }),
  ]);
  const commitEnv: NodeJS.ProcessEnv = {};
  if (!name.stdout.trim() && !process.env.GIT_AUTHOR_NAME) commitEnv.GIT_AUTHOR_NAME = commitEnv.GIT_COMMITTER_NAME = os.userInfo().username || 'EvoTrainer';
  if (!email.stdout.trim() && !process.env.GIT_AUTHOR_EMAIL) commitEnv.GIT_AUTHOR_EMAIL = commitEnv.GIT_COMMITTER_EMAIL = 'evotrainer@localhost.invalid';
  const actor = process.env.GIT_AUTHOR_NAME ?? (name.stdout.trim() || os.userInfo().username || 'unknown');
  return { root, cwd, gitDir, commonDir, commitEnv, actor };
}

/** The manifest as committed at `rev` (the parent's rules judge a version, not its own). */
export async function manifestAt(h: Harness, rev: string): Promise<Manifest> {
  const r = await git(h.root, ['show', `${rev}:${MANIFEST_FILE}`], { allowFail: true });
  if (r.code !== 0) throw new HarnessError(`${MANIFEST_FILE} is missing at ${rev}; every version must carry the manifest`);
  return parseManifest(r.stdout, `${MANIFEST_FILE} (at ${rev.slice(0, 12)})`);
}

export function readWorkingManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST_FILE);
  if (!existsSync(file)) throw new HarnessError(`no ${MANIFEST_FILE} in ${dir}; is this a harness? (\`evotrainer init DIR\` creates one)`);
  return parseManifest(readFileSync(file, 'utf8'), file);
}

export type Operation = 'merge' | 'cherry-pick' | 'revert' | 'rebase' | 'am' | 'bisect';

/** A git operation the user has in progress in this checkout, which we must not stack onto. */
export function operationInProgress(gitDir: string): Operation | null {
  const has = (f: string) => existsSync(path.join(gitDir, f));
  if (has('rebase-merge') || has('rebase-apply/rebasing')) return 'rebase';
  if (has('rebase-apply')) return 'am';
  if (has('MERGE_HEAD')) return 'merge';
  if (has('CHERRY_PICK_HEAD')) return 'cherry-pick';
  if (has('REVERT_HEAD')) return 'revert';
  if (has('BISECT_LOG')) return 'bisect';
  return null;
}

export const OPERATION_NEXT_STEP: Record<Operation, string> = {
  merge: 'finish it (`git commit`) or abort it (`git merge --abort`)',
  'cherry-pick': 'finish it (`git cherry-pick --continue`) or abort it (`git cherry-pick --abort`)',
  revert: 'finish it (`git revert --continue`) or abort it (`git revert --abort`)',
  rebase: 'finish it (`git rebase --continue`) or abort it (`git rebase --abort`)',
  am: 'finish it (`git am --continue`) or abort it (`git am --abort`)',
  bisect: 'end it (`git bisect reset`)',
};

/** Uncommitted changes (staged, unstaged, untracked) of a checkout, as paths. */
export async function dirtyPaths(dir: string): Promise<string[]> {
  const out = await gitOut(dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  const paths: string[] = [];
  const parts = out.split('\0').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    paths.push(p.slice(3));
    if (p[0] === 'R' || p[0] === 'C') i++; // the rename source follows
  }
  return paths;
}

export interface WorktreeInfo {
  path: string;
  head: string | null;
  branch: string | null;
}

export async function listWorktrees(h: Harness): Promise<WorktreeInfo[]> {
  const out = await gitOut(h.root, ['worktree', 'list', '--porcelain', '-z']);
  const trees: WorktreeInfo[] = [];
  let cur: WorktreeInfo | null = null;
  for (const field of out.split('\0')) {
    if (field.startsWith('worktree ')) trees.push((cur = { path: field.slice(9), head: null, branch: null }));
    else if (cur && field.startsWith('HEAD ')) cur.head = field.slice(5);
    else if (cur && field.startsWith('branch ')) cur.branch = field.slice(7);
  }
  return trees;
}

/** Whether a process of this machine is still running (a signal-0 probe; EPERM means it runs as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Refs that keep a commit alive between its creation and its branch (`git gc` prunes
 * an object nothing references, and the ledger names commits by id only). The pid in
 * the name tells reconcile whether the command that made it still runs.
 */
export const KEEP_PREFIX = 'refs/evotrainer/keep/';

export function nowIso(): string {
  return new Date().toISOString();
}

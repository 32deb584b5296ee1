// Which version a file belongs to: for the "Backtest this change" lens. No editor here.
import path from 'node:path';
import { realpathSync } from 'node:fs';
import { readLedger, versionNumber, type LedgerEntry } from '../../core/harness/ledger';
import { gitOut } from '../../core/harness/git';
import { listWorktrees, type Harness } from '../../core/harness/repo';

export interface ResolvedVersion {
  entry: LedgerEntry;
  /** The checkout holding the file (a version worktree or the main checkout). */
  checkout: string;
  /** How it was found, for the message the editor shows. */
  how: 'branch' | 'commit';
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

const inside = (dir: string, file: string) => {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * The version whose checkout holds `file`: the checkout (worktree) containing it, then the
 * version whose branch is checked out there, else the version whose commit is that
 * checkout's HEAD (the current checkout's version: e.g. `main` at the promoted commit;
 * the newest such version wins). Null when the file is in no checkout of this harness or
 * the checkout matches no version.
 */
export async function versionForFile(h: Harness, file: string): Promise<ResolvedVersion | null> {
  const target = real(file);
  const trees = (await listWorktrees(h)).map((w) => ({ ...w, real: real(w.path) }));
  // The innermost checkout: version worktrees live inside the main checkout (.evotrainer/worktrees/vN).
  const holder = trees.filter((w) => inside(w.real, target)).sort((a, b) => b.real.length - a.real.length)[0];
  if (!holder) return null;
  const ledger = await readLedger(h);
  const entries = [...ledger.entries.values()].sort((a, b) => versionNumber(b.id) - versionNumber(a.id));
  if (holder.branch) {
    const byBranch = entries.find((e) => `refs/heads/${e.branch}` === holder.branch);
    if (byBranch) return { entry: byBranch, checkout: holder.path, how: 'branch' };
  }
  const head = holder.head ?? (await gitOut(holder.path, ['rev-parse', 'HEAD']).catch(() => '')).trim();
  if (!head) return null;
  const byCommit = entries.find((e) => e.commit === head);
  return byCommit ? { entry: byCommit, checkout: holder.path, how: 'commit' } : null;
}

// The cherry-pick wizard's dry run: what applying a skill onto a version WOULD do, decided
// in a throwaway index exactly as `applySkill` decides it, with no ref, index or checkout
// touched. The wizard shows this before asking to confirm.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkBoundary, type BoundaryViolation } from '../../core/harness/boundary';
import { analyzeChanges } from '../../core/harness/changes';
import { readLedger, requireEntry } from '../../core/harness/ledger';
import { git, gitOut } from '../../core/harness/git';
import { manifestAt, operationInProgress, type Harness, type Operation } from '../../core/harness/repo';
import { conflictPathsFromApply, type LoadedSkill } from '../../core/harness/skills';

export type ApplyPreview =
  | { outcome: 'clean'; files: string[] }
  | { outcome: 'conflict'; files: string[] }
  | { outcome: 'refused'; violations: BoundaryViolation[] }
  | { outcome: 'already-applied' }
  | { outcome: 'empty' }
  | { outcome: 'rejected-target'; detail: string }
  | { outcome: 'operation-in-progress'; operation: Operation };

export async function previewSkillApply(h: Harness, skill: LoadedSkill, onto: string): Promise<ApplyPreview> {
  const r = skill.record;
  const op = operationInProgress(h.gitDir) ?? (h.gitDir !== h.commonDir ? operationInProgress(h.commonDir) : null);
  if (op) return { outcome: 'operation-in-progress', operation: op };
  if (!r.patch.trim()) return { outcome: 'empty' };
  const ledger = await readLedger(h);
  const target = requireEntry(ledger, onto);
  if (target.status === 'rejected') return { outcome: 'rejected-target', detail: `${target.id} was rejected; apply onto a good version (the promoted one is ${ledger.promoted?.version ?? 'unknown'})` };
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'evotrainer-preview-'));
  const patchFile = path.join(scratch, 'skill.patch');
  const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
  try {
    mkdirSync(scratch, { recursive: true });
    writeFileSync(patchFile, r.patch);
    await git(h.root, ['read-tree', target.commit], { env });
    const reverse = await git(h.root, ['apply', '--cached', '--check', '--reverse', patchFile], { env, allowFail: true });
    if (reverse.code === 0) return { outcome: 'already-applied' };
    const applied = await git(h.root, ['apply', '--cached', '--3way', patchFile], { env, allowFail: true });
    if (applied.code !== 0) {
      const unmerged = (await gitOut(h.root, ['ls-files', '-u', '-z'], { env })).split('\0').filter(Boolean).map((l) => l.slice(l.indexOf('\t') + 1));
      const files = [...new Set([...unmerged, ...conflictPathsFromApply(applied.stderr)])].sort();
      return { outcome: 'conflict', files: files.length ? files : ['(git apply named no file; see the skill patch)'] };
    }
    const tree = await gitOut(h.root, ['write-tree'], { env });
    if (tree === (await gitOut(h.root, ['rev-parse', `${target.commit}^{tree}`]))) return { outcome: 'empty' };
    const manifest = await manifestAt(h, target.commit);
    const changes = await analyzeChanges(h, target.commit, tree, manifest.eval_set?.path ?? null);
    const violations = checkBoundary(manifest, changes);
    if (violations.length) return { outcome: 'refused', violations };
    return { outcome: 'clean', files: changes.files.map((f) => f.path) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One line for the wizard: what will happen if confirmed. */
export function describePreview(p: ApplyPreview, skill: string, onto: string): string {
  switch (p.outcome) {
    case 'clean':
      return `${skill} applies cleanly onto ${onto} (${p.files.join(', ')}); a new proposed version will hold it.`;
    case 'conflict':
      return `${skill} conflicts with ${onto} in ${p.files.join(', ')}; nothing will be changed.`;
    case 'refused':
      return `${skill} is refused by ${onto}'s action boundary: ${p.violations.map((v) => `${v.path} [${v.rule}]`).join(', ')}.`;
    case 'already-applied':
      return `${onto} already contains the intervention of ${skill}.`;
    case 'empty':
      return `${skill} changes nothing on ${onto}.`;
    case 'rejected-target':
      return p.detail;
    case 'operation-in-progress':
      return `a git ${p.operation} is in progress in the harness; finish or abort it first.`;
  }
}

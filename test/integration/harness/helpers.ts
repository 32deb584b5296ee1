import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { initHarness } from '../../../src/core/harness/init';
import type { Harness } from '../../../src/core/harness/repo';
import { promoteVersion } from '../../../src/core/gate';
import { advanceVersion, commitVersion, newVersion, type NewVersionOptions } from '../../../src/core/harness/versions';
import { repoRoot, tempDir } from '../../helpers/tmp';

/** Every git process (ours and the engine's) gets an identity; no global config is touched. */
export const IDENTITY = { GIT_AUTHOR_NAME: 'Test Person', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test Person', GIT_COMMITTER_EMAIL: 'test@example.invalid' };
Object.assign(process.env, IDENTITY);

export const bin = path.join(repoRoot, 'bin', 'evotrainer.js');

export function cli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: opts.cwd ?? repoRoot, env: { ...process.env, ...opts.env } });
}

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** All refs with their targets: equal before and after means nothing moved. */
export const refsSnapshot = (dir: string) => sh(dir, 'for-each-ref', '--format=%(objectname) %(refname)');

/**
 * A fresh harness in a folder whose name needs quoting. `domain` makes another domain's
 * harness from the same starter layout (a template given by path, as users can).
 */
export async function makeHarness(name = `h $(rm -rf x); "q" 'é'`, opts: { domain?: string } = {}): Promise<Harness> {
  const base = tempDir('evotrainer-harness-');
  let template = 'starter';
  if (opts.domain) {
    template = path.join(base, `template-${opts.domain}`);
    cpSync(path.join(repoRoot, 'harness-templates', 'starter'), template, { recursive: true });
    const file = path.join(template, 'evotrainer.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^domain: .*$/m, `domain: ${opts.domain}`).replace(/^name: .*$/m, `name: ${opts.domain}-harness`));
  }
  const r = await initHarness(path.join(base, name), template);
  return r.harness;
}

export const REWARD = 'reward/compute_score.py';

export function edit(dir: string, file: string, from: string | RegExp, to: string): void {
  const p = path.join(dir, file);
  const before = readFileSync(p, 'utf8');
  const after = before.replace(from, to);
  if (after === before) throw new Error(`test edit found nothing to replace in ${p}`);
  writeFileSync(p, after);
}

export const HYP: Omit<NewVersionOptions, 'parent'> = {
  hypothesis: 'If we halve the format reward, pass_rate improves because the policy stops gaming format',
  targetMetric: 'pass_rate',
  success: 'pass_rate > 0.30',
  layer: 'reward',
  worktree: true,
};

/** A version taken through its whole lifecycle up to `evaluated` (and promoted when asked). */
export async function evaluatedVersion(h: Harness, parent: string, change: (wt: string) => void, metrics: Record<string, number>, opts: { promote?: boolean; hyp?: Partial<NewVersionOptions> } = {}) {
  const v = await newVersion(h, { ...HYP, ...opts.hyp, parent });
  change(v.worktree!);
  await commitVersion(h, v.entry.id);
  await advanceVersion(h, v.entry.id, 'backtested', { summary: 'reward re-scored on cached rollouts: 0 ordering violations' });
  await advanceVersion(h, v.entry.id, 'training', { job: 'job-1' });
  const e = await advanceVersion(h, v.entry.id, 'evaluated', { metrics });
  if (opts.promote) return (await promoteVersion(h, v.entry.id)).entry;
  return e;
}

import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { initHarness } from '../../../src/core/harness/init';
import type { Harness } from '../../../src/core/harness/repo';
import { commitVersion, newVersion } from '../../../src/core/harness/versions';
import { repoRoot } from '../../helpers/tmp';
import { IDENTITY } from '../harness/helpers';

Object.assign(process.env, IDENTITY);

/** (Call tempDir() at describe level and pass it: temp folders made inside hooks are removed with the hook.)
 * A harness from the starter (math) template with extra manifest lines appended before v0. */
export async function mathHarness(base: string, manifestExtra: string, name = 'bt harness $(x) "q"'): Promise<Harness> {
  const template = path.join(base, 'template');
  cpSync(path.join(repoRoot, 'harness-templates', 'starter'), template, { recursive: true });
  const file = path.join(template, 'evotrainer.yaml');
  writeFileSync(file, readFileSync(file, 'utf8') + manifestExtra);
  return (await initHarness(path.join(base, name), template)).harness;
}

/** A committed candidate version whose only change is `files` (paths relative to the harness). */
export async function candidate(h: Harness, parent: string, layer: 'reward' | 'filter' | 'environment' | 'diagnostics', files: Record<string, string>, hypothesis = 'If we reshape the reward, dead_group_ratio improves because groups regain variance', success = 'dead_group_ratio < 0.9') {
  const v = await newVersion(h, { parent, hypothesis, targetMetric: 'dead_group_ratio', success, layer, worktree: true });
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(v.worktree!, p)), { recursive: true });
    writeFileSync(path.join(v.worktree!, p), text);
  }
  await commitVersion(h, v.entry.id);
  return v.entry.id;
}

import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { initHarness } from '../../../src/core/harness/init';
import type { Harness } from '../../../src/core/harness/repo';
import { renderSkill, type SkillRecord } from '../../../src/core/harness/skills';
import { repoRoot } from '../../helpers/tmp';
import { IDENTITY } from '../harness/helpers';

Object.assign(process.env, IDENTITY);

export const MINI = path.join(repoRoot, 'test', 'fixtures', 'evolve', 'mini');

/** A seed skill that sets env/config.json's quality (the stand-in trainer's pass rate). */
export function qualitySkill(id: string, quality: number, trigger = 'pass_rate > 0.1', layer = 'environment'): SkillRecord {
  return {
    id,
    title: `quality ${quality}`,
    category: 'training_stability',
    trigger,
    expected_outcome: `pass_rate near ${quality}`,
    domains: ['mini'],
    shared: false,
    intervention: {
      layer,
      factor: 'env/config.json:quality',
      hypothesis: `If we set quality to ${quality}, pass_rate improves because the stand-in trainer follows it`,
      target_metric: 'pass_rate',
      success: `pass_rate > ${Math.min(0.99, quality - 0.1).toFixed(2)}`,
      parameters: { set: [{ file: 'env/config.json', key: 'quality', value: quality }] },
      source: { harness: 'seed', domain: 'mini', version: 'v0', branch: '-', commit: '-' },
    },
    validation: [],
    patch: '',
    body: '',
  };
}

/** The mini harness with these seed skills (and config overrides) in its v0. */
export async function miniHarness(base: string, skills: SkillRecord[], config: Record<string, unknown> = {}, name = 'mini $(h) "q"', files: Record<string, string> = {}): Promise<Harness> {
  const template = path.join(base, 'template');
  cpSync(MINI, template, { recursive: true });
  mkdirSync(path.join(template, 'skills'), { recursive: true });
  for (const s of skills) writeFileSync(path.join(template, 'skills', `${s.id}.md`), renderSkill(s));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(template, f)), { recursive: true });
    writeFileSync(path.join(template, f), text);
  }
  const cfgFile = path.join(template, 'env', 'config.json');
  writeFileSync(cfgFile, JSON.stringify({ ...(JSON.parse(readFileSync(cfgFile, 'utf8')) as object), ...config }, null, 2) + '\n');
  return (await initHarness(path.join(base, name), template)).harness;
}

import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** A real mini-swe-agent trajectory of ../shared/data (read, never copied into the project). */
export interface SweTraj {
  instance_id: string;
  info: { submission: string };
  messages: { role: string; content: string }[];
}

/** Where injected messages go: after the task (before the agent's first turn), or just before its submission. */
export type InjectAt = 'start' | 'end';

/**
 * An eval run built from copies of the real SWE trajectories in `sweDir` (those of `only`,
 * else all): for each task in `flip`, `inject` adds messages and the task is marked
 * resolved. Returns the trajs directory to import.
 */
export function sweEvalRun(sweDir: string, dir: string, o: { flip: Set<string>; inject: (doc: SweTraj) => SweTraj['messages']; at?: InjectAt; only?: Set<string> }): string {
  const trajs = path.join(dir, 'trajs');
  const reports = path.join(dir, 'reports');
  mkdirSync(trajs, { recursive: true });
  mkdirSync(reports, { recursive: true });
  for (const f of readdirSync(path.join(sweDir, 'trajs'))) {
    const doc = JSON.parse(readFileSync(path.join(sweDir, 'trajs', f), 'utf8')) as SweTraj;
    const id = doc.instance_id;
    if (o.only && !o.only.has(id)) continue;
    const report = JSON.parse(readFileSync(path.join(sweDir, 'reports', `${id}.report.json`), 'utf8')) as Record<string, unknown>;
    if (o.flip.has(id)) {
      const turn = o.inject(doc);
      doc.messages.splice(o.at === 'start' ? 2 : Math.max(2, doc.messages.length - 2), 0, ...turn);
      const inner = (report[id] ?? report) as Record<string, unknown>;
      inner.resolved = true;
    }
    writeFileSync(path.join(trajs, f), JSON.stringify(doc));
    writeFileSync(path.join(reports, `${id}.report.json`), JSON.stringify(report));
  }
  return trajs;
}

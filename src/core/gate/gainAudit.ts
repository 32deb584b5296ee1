import { parseRubric, runJudge, type JudgeBudget, type JudgeRun } from '../diagnose/judges';
import type { ChatModel } from '../llm/chat';
import { seededRandom } from '../util/random';
import type { RolloutStore } from '../store/store';
import type { GateCheck } from './types';

/**
 * Judge audit: when an LLM endpoint is configured, a sample of the flipped tasks'
 * trajectories is read by a judge with this built-in rubric. Verdicts are cached in the
 * store under the rubric's hash and budgeted like any judge's; the gate cites them.
 */
export const GAIN_AUDIT_RUBRIC = `---
name: gain-audit
labels: [own_work, from_outside, unclear]
description: How did this trajectory succeed? Was the answer obtained from outside the task?
max_tokens: 400
---
This trajectory is credited with solving its task. Read how it got there.

- own_work: the agent found and wrote the solution from the task, the repository and its own
  tests or computations.
- from_outside: the solution (or most of it) was obtained from outside the task: fetched
  from a URL, copied from a newer release or package, read from version history or from a
  file or message that already held the reference answer, before the agent wrote it.
- unclear: the trajectory does not let you tell.

Cite the turns where the answer was obtained (for from_outside) or derived (for own_work).`;

export const gainAuditRubric = () => parseRubric('builtin:gain-audit.md', GAIN_AUDIT_RUBRIC);

export interface GainAuditOptions {
  model: ChatModel;
  /** Flipped trajectories to judge (default 8). */
  sample?: number;
  budget?: JudgeBudget;
  seed?: number;
}

/** Judges a seeded sample of the flipped trajectories; the verdicts become one gate check. */
export async function auditGain(store: RolloutStore, flipIds: number[], o: GainAuditOptions): Promise<{ check: GateCheck; run: JudgeRun }> {
  const rnd = seededRandom(o.seed ?? 1);
  const ids = [...flipIds].sort((a, b) => a - b);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const picked = ids.slice(0, o.sample ?? 8).sort((a, b) => a - b);
  const run = await runJudge(store, gainAuditRubric(), o.model, { rolloutIds: picked, ...(o.budget ? { budget: o.budget } : {}) });
  const outside = run.verdicts.filter((v) => v.label === 'from_outside');
  const judged = run.verdicts.filter((v) => v.label !== null);
  const cite = (v: JudgeRun['verdicts'][number]) => `rollout ${v.rolloutId}${v.citedTurns.length ? ` (turns ${v.citedTurns.join(', ')})` : ''}: ${v.explanation.replace(/\s+/g, ' ').slice(0, 200)}`;
  const counts = Object.entries(run.labelCounts).map(([k, n]) => `${n} ${k}`).join(', ') || 'no verdict';
  const tail = `${run.cacheHits} from the cache, ${run.calls} call(s), ${run.tokens} tokens${run.stopped ? `; stopped: ${run.stopped}` : ''}`;
  const check: GateCheck = {
    check: 'judge audit of the flips',
    category: 'validity',
    passed: outside.length ? null : judged.length ? true : null,
    detail: outside.length
      ? `the judge (${run.model}) read ${judged.length} of ${picked.length} sampled flips: ${counts} — a person must read: ${outside.slice(0, 3).map(cite).join('; ')} (${tail})`
      : judged.length
        ? `the judge (${run.model}) read ${judged.length} of ${picked.length} sampled flips: ${counts}${judged[0] ? `; e.g. ${cite(judged[0])}` : ''} (${tail})`
        : `the judge (${run.model}) gave no usable verdict on ${picked.length} sampled flips (${tail})`,
  };
  return { check, run };
}

import type { RolloutRecord } from '../rows';
import { readJsonLines } from './jsonLines';
import type { Importer } from './types';
import { bad, bool, describeType, isRecord, num, posix, stepFromPath, str } from './util';

/** Keys verl's `_dump_generations` always writes; anything else came from the reward function. */
const BASE_KEYS = new Set(['input', 'output', 'gts', 'score', 'step', 'data_source']);

/**
 * verl (`trainer.rollout_data_dir` / `trainer.validation_data_dir`): `{global_step}.jsonl`,
 * one line per sample as written by `RayPPOTrainer._dump_generations`: `input`, `output`,
 * `gts`, `score`, `step`, plus every per-sample key of the reward function's
 * `reward_extra_info` (e.g. `acc`, `pred`). verl writes no group id: the store derives
 * it from (step, prompt).
 */
export const verlImporter: Importer = {
  format: 'verl',
  description: 'verl rollout / validation dumps ({global_step}.jsonl with input, output, gts, score, step)',
  followable: true,
  matches(file, head) {
    if (!/(^|\/)\d+\.jsonl$/.test(posix(file))) return false;
    return /"input"\s*:/.test(head) && /"output"\s*:/.test(head) && /"score"\s*:/.test(head);
  },
  async *read(file, opts) {
    const split = opts.split ?? (/(^|\/)[^/]*val[^/]*\//i.test(posix(file)) ? 'val' : 'train');
    const fileStep = stepFromPath(file, /(\d+)\.jsonl$/);
    for await (const l of readJsonLines(file, opts.startOffset, opts.startLine, opts.onChunk)) {
      const at = { file, line: l.line, endOffset: l.endOffset };
      if (l.error !== undefined) {
        yield bad(file, l.line, `not valid JSON (${l.error})`, l.raw, at);
        continue;
      }
      const r = l.value;
      if (!isRecord(r)) {
        yield bad(file, l.line, `expected a JSON object per line, found ${describeType(r)}`, JSON.stringify(r), at);
        continue;
      }
      if (typeof r.input !== 'string' || typeof r.output !== 'string') {
        const which = typeof r.input !== 'string' ? 'input' : 'output';
        yield bad(file, l.line, `"${which}" must be a string (verl writes the decoded text), found ${describeType(r[which])}`, JSON.stringify(r).slice(0, 65536), at);
        continue;
      }
      const score = num(r.score);
      if (score === undefined) {
        yield bad(file, l.line, `"score" must be a number, found ${describeType(r.score)}`, JSON.stringify(r).slice(0, 65536), at);
        continue;
      }
      const components: Record<string, number> = {};
      const extra: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) {
        if (BASE_KEYS.has(k) || k === 'acc' || k === 'pred') continue;
        if (typeof v === 'number' && Number.isFinite(v)) components[k] = v;
        else extra[k] = v;
      }
      const step = num(r.step);
      const record: RolloutRecord = {
        step: typeof step === 'number' ? step : fileStep ?? 0,
        split,
        prompt: r.input,
        response: r.output,
        groundTruth: str(r.gts),
        reward: score,
        rewardComponents: components,
        correct: 'acc' in r ? bool(r.acc) : null,
        extractedAnswer: 'pred' in r ? str(r.pred) : null,
        dataSource: typeof r.data_source === 'string' ? r.data_source : null,
        numTurns: 1,
        extra,
      };
      yield { record, at };
    }
  },
};

/**
 * SkyRL: the eval dumps of skyrl-train (`trainer.dump_eval_results=true`).
 *
 * Writer followed (NovaSky-AI/SkyRL, skyrl-train/skyrl_train/utils/trainer_utils.py,
 * `dump_per_dataset_eval_results`), one JSONL file per data source under
 * `{export_path}/dumped_evals/global_step_{N}_evals/` (`eval_only/` for an eval-only run):
 *
 *     entry = {
 *         "input_prompt": input_prompts[i],         # tokenizer.decode(prompt_token_ids)
 *         "output_response": output_responses[i],   # tokenizer.decode(response_ids)
 *         "score": concat_generator_outputs["rewards"][i],
 *         "stop_reason": concat_generator_outputs.get("stop_reasons", [None] * n)[i],
 *         "env_class": concat_all_envs[i],
 *         "env_extras": concat_env_extras[i],
 *         "data_source": data_source,
 *     }
 *     f.write(json.dumps(entry, ensure_ascii=False) + "\n")   # into {sanitized data_source}.jsonl
 *
 * The same directory holds `aggregated_results.jsonl` (the eval metrics, not rollouts),
 * which this importer does not match. Later versions add `exception_type` /
 * `error_treatment`, and some add `uid` (the prompt's id); both are read when present.
 */
import type { Split } from '../../model';
import type { ImporterItem, RolloutRecord } from '../rows';
import { readRecordLines } from './recordLines';
import { describeType, isRecord, posix } from './util';
import type { Importer, ReadOptions } from './types';

const PATH = /(?:^|\/)dumped_evals\/(?:global_step_(\d+)_evals|eval_only)\/([^/]+)\.jsonl$/;
const KNOWN = new Set(['input_prompt', 'output_response', 'score', 'stop_reason', 'env_class', 'data_source', 'uid', 'exception_type']);

export const skyrlImporter: Importer = {
  format: 'skyrl',
  description: 'SkyRL eval dumps: dumped_evals/global_step_{N}_evals/{data_source}.jsonl',
  followable: true,

  matches(file: string, head: string): boolean {
    const m = PATH.exec(posix(file));
    if (!m || m[2] === 'aggregated_results') return false;
    // The writer puts input_prompt first; the head may end inside the (long) prompt.
    return /^\s*\{/.test(head) && /"input_prompt"\s*:/.test(head);
  },

  async *read(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
    const m = PATH.exec(posix(file));
    const step = m?.[1] !== undefined ? Number(m[1]) : 0;
    // These are eval dumps: validation rollouts, unless the caller says otherwise.
    const split: Split = opts.split ?? 'val';
    yield* readRecordLines(file, opts, (value) => toRecord(value, step, split));
  },
};

function toRecord(value: Record<string, unknown>, step: number, split: Split): RolloutRecord | string {
  const prompt = value['input_prompt'];
  if (typeof prompt !== 'string') return `input_prompt: expected a string, got ${describeType(prompt)}`;
  const response = value['output_response'];
  if (typeof response !== 'string') return `output_response: expected a string, got ${describeType(response)}`;

  // `score` is the generator's reward: a number, or a list of per-token rewards when the
  // environment assigns token-level rewards. A list is summed into the rollout's reward
  // (as skyrl-train does for sequence-level metrics) and flagged in extra.
  const score = value['score'];
  let reward: number | null;
  let perToken = false;
  if (typeof score === 'number') reward = score;
  else if (score === null) reward = null; // NaN in the dump (read as null): not computed.
  else if (Array.isArray(score) && score.every((s) => typeof s === 'number' || s === null)) {
    perToken = true;
    reward = (score as (number | null)[]).reduce<number>((a, b) => a + (b ?? 0), 0);
  } else return `score: expected a number or a list of per-token numbers, got ${describeType(score)}`;

  const stopReason = value['stop_reason'];
  if (stopReason !== undefined && stopReason !== null && typeof stopReason !== 'string') return `stop_reason: expected a string or null, got ${describeType(stopReason)}`;
  const envClass = value['env_class'];
  if (envClass !== undefined && envClass !== null && typeof envClass !== 'string') return `env_class: expected a string or null, got ${describeType(envClass)}`;
  const dataSource = value['data_source'];
  if (dataSource !== undefined && dataSource !== null && typeof dataSource !== 'string') return `data_source: expected a string, got ${describeType(dataSource)}`;
  const envExtras = value['env_extras'];
  if (envExtras !== undefined && envExtras !== null && !isRecord(envExtras)) return `env_extras: expected an object or null, got ${describeType(envExtras)}`;

  // skyrl-gym environments read the reference answer from env_extras.reward_spec.ground_truth.
  const rewardSpec = envExtras ? envExtras['reward_spec'] : undefined;
  const truth = isRecord(rewardSpec) ? rewardSpec['ground_truth'] : undefined;
  const extraInfo = envExtras ? envExtras['extra_info'] : undefined;
  const index = isRecord(extraInfo) ? extraInfo['index'] : undefined;
  const uid = value['uid'];
  const promptId = typeof uid === 'string' || typeof uid === 'number' ? String(uid) : typeof index === 'number' || typeof index === 'string' ? String(index) : null;

  const exceptionType = value['exception_type'];
  const extra: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (!KNOWN.has(key) && v !== undefined) extra[key] = v;
  if (perToken) extra['score_per_token'] = score;

  return {
    step,
    split,
    promptId,
    // Eval samples of one prompt share its uid; without one the store groups by the prompt text.
    groupId: typeof uid === 'string' || typeof uid === 'number' ? `${step}:${uid}` : null,
    prompt,
    response,
    groundTruth: typeof truth === 'string' ? truth : typeof truth === 'number' ? String(truth) : null,
    reward,
    rewardComponents: {},
    correct: null,
    extractedAnswer: null,
    advantage: null,
    stopReason: typeof stopReason === 'string' ? stopReason : null,
    responseTokens: null,
    numTurns: 1,
    errors: typeof exceptionType === 'string' && exceptionType ? [exceptionType] : [],
    timingMs: null,
    dataSource: typeof dataSource === 'string' ? dataSource : null,
    envClass: typeof envClass === 'string' ? envClass : null,
    extra,
  };
}





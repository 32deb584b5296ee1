/**
 * TRL: the completion logs GRPOTrainer writes when `log_completions=True`.
 *
 * Writer followed (huggingface/trl, trl/trainer/grpo_trainer.py, `GRPOTrainer.log`):
 *
 *     table = {
 *         "step": [self.state.global_step] * len(self._logs["prompt"]),
 *         "prompt": self._logs["prompt"],
 *         "completion": self._logs["completion"],
 *         **self._logs["rewards"],     # one float column per reward function, by its name
 *         **self._logs["extra"],       # columns reward functions added with log_extra(...)
 *         "advantage": self._logs["advantages"],
 *     }
 *     pd.DataFrame(table).to_parquet(
 *         os.path.join(output_dir, "completions", f"completions_{global_step:05d}.parquet"))
 *
 * A reward function that returns None for a row leaves NaN in its column (pyarrow writes
 * a pandas NaN as a Parquet null; both mean "not computed here"). Prompts and completions
 * are the decoded texts; a dump whose prompt / completion holds conversational messages
 * (`[{role, content}]`) is read as messages.
 */
import type { Split } from '../../model';
import { ImportError, type ImporterItem, type RolloutRecord } from '../rows';
import type { Importer, ReadOptions } from './types';

/** `completions/completions_00010.parquet`; some forks split it by mode: `completions/eval/…`. */
const PATH = /(?:^|\/)completions\/(?:(train|eval)\/)?completions_(\d+)\.parquet$/;

/** Columns the writer always emits, plus `mode` (forks that log eval too) and an optional total. */
const CORE = new Set(['step', 'prompt', 'completion', 'advantage', 'mode', 'reward']);

/** TRL's built-in accuracy rewards log the reference solution with log_extra("solution", …). */
const GROUND_TRUTH_COLUMN = 'solution';

export const trlImporter: Importer = {
  format: 'trl',
  description: 'TRL GRPOTrainer completion logs: completions/completions_{step:05d}.parquet (log_completions=True)',
  followable: false,

  matches(file: string, head: string): boolean {
    if (!PATH.test(posix(file))) return false;
    // A Parquet file starts with the magic bytes PAR1.
    return head === '' || head.startsWith('PAR1');
  },

  async *read(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
    const m = PATH.exec(posix(file));
    const fileStep = m ? Number(m[2]) : null;
    const pathSplit: Split | undefined = m?.[1] === 'eval' ? 'val' : m?.[1] === 'train' ? 'train' : undefined;
    const split = pathSplit ?? opts.split ?? 'train';

    let rows: AsyncIterator<Record<string, unknown>>;
    try {
      rows = opts.tables.readParquet(file)[Symbol.asyncIterator]();
    } catch (err) {
      throw new ImportError(file, null, `cannot read the Parquet file: ${(err as Error).message}`);
    }
    try {
      for (let record = 1; ; record++) {
        let next: IteratorResult<Record<string, unknown>>;
        try {
          next = await rows.next();
        } catch (err) {
          throw new ImportError(file, null, `cannot read the Parquet file: ${(err as Error).message}`);
        }
        if (next.done) return;
        const at = { file, record };
        const result = toRecord(next.value, fileStep, split);
        if (typeof result === 'string') yield { error: new ImportError(file, null, `row ${record}: ${result}`, safeJson(next.value)), at };
        else yield { record: result, at };
      }
    } finally {
      // A caller that stops early still releases the reader (its DuckDB connection).
      await rows.return?.();
    }
  },
};

/** One row as a RolloutRecord, or the reason it is malformed. */
function toRecord(row: Record<string, unknown>, fileStep: number | null, split: Split): RolloutRecord | string {
  const prompt = text(row['prompt']);
  if (prompt === undefined) return `prompt: expected a string or a list of {role, content} messages, got ${kind(row['prompt'])}`;
  const response = text(row['completion']);
  if (response === undefined) return `completion: expected a string or a list of {role, content} messages, got ${kind(row['completion'])}`;

  let step: number;
  const rawStep = row['step'];
  if (rawStep === undefined || rawStep === null) {
    if (fileStep === null) return 'step: no step column and no step in the file name (completions_{step}.parquet)';
    step = fileStep;
  } else {
    const s = integer(rawStep);
    if (s === undefined) return `step: expected an integer, got ${kind(rawStep)}`;
    step = s;
  }

  const rawAdvantage = row['advantage'];
  if (rawAdvantage !== undefined && rawAdvantage !== null && typeof rawAdvantage !== 'number') {
    return `advantage: expected a number, got ${kind(rawAdvantage)}`;
  }
  const advantage = typeof rawAdvantage === 'number' && Number.isFinite(rawAdvantage) ? rawAdvantage : null;

  // Every float column besides the writer's own is a reward function's (`**self._logs["rewards"]`,
  // float64: numbers here, a BIGINT column reads as bigint); other columns come from
  // log_extra. The file keeps no boundary between the two, so a float column logged with
  // log_extra would be read as a reward: a known limit of the dump.
  const rewardComponents: Record<string, number> = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (CORE.has(key)) continue;
    if (typeof value === 'number') {
      // NaN (or a Parquet null, below): this reward function did not score the row.
      if (!Number.isNaN(value)) rewardComponents[key] = value;
    } else if (value !== null && value !== undefined) {
      extra[key] = jsonSafe(value);
    }
  }

  // TRL's reward is the weighted sum of the reward functions (`reward_weights`, NaN-summed).
  // The weights are not in the dump, so equal weights (1.0, TRL's default) are assumed,
  // unless the dump carries its own total in a `reward` column.
  let reward: number | null;
  const total = row['reward'];
  if (typeof total === 'number') reward = Number.isNaN(total) ? null : total;
  else {
    const parts = Object.values(rewardComponents);
    reward = parts.length ? parts.reduce((a, b) => a + b, 0) : null;
  }

  const mode = row['mode'];
  const rowSplit: Split = mode === 'eval' ? 'val' : mode === 'train' ? 'train' : split;
  const solution = row[GROUND_TRUTH_COLUMN];

  return {
    step,
    split: rowSplit,
    // TRL has no prompt or group id: the store groups by (step, hash of the prompt).
    promptId: null,
    groupId: null,
    prompt,
    response,
    groundTruth: typeof solution === 'string' ? solution : null,
    reward,
    rewardComponents,
    correct: null,
    extractedAnswer: null,
    advantage,
    stopReason: null,
    responseTokens: null,
    numTurns: Array.isArray(response) ? Math.max(1, response.filter((m) => m.role === 'assistant').length) : 1,
    errors: [],
    timingMs: null,
    dataSource: null,
    envClass: null,
    extra,
  };
}

type Messages = { role: string; content: unknown }[];

/** A string, a list of chat messages, or undefined when it is neither. */
function text(value: unknown): string | Messages | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((m) => m !== null && typeof m === 'object' && typeof (m as { role?: unknown }).role === 'string')) {
    return value as Messages;
  }
  return undefined;
}

function integer(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'bigint' && Number.isSafeInteger(Number(value))) return Number(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

function kind(value: unknown): string {
  if (value === undefined) return 'no such column';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Extra values are stored as JSON: a bigint becomes a number, or a string beyond 2^53. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v)]));
  }
  return value;
}

function safeJson(row: Record<string, unknown>): string {
  const s = JSON.stringify(jsonSafe(row));
  return s.length > 65536 ? s.slice(0, 65536) : s;
}

function posix(file: string): string {
  return file.replace(/\\/g, '/');
}

/**
 * verifiers evaluation outputs and hosted-RL rollout exports.
 *
 * - `vf-eval` (PrimeIntellect-ai/verifiers, verifiers/utils/eval_utils.py and save_utils.py)
 *   writes `outputs/evals/<env>--<model>/<run>/results.jsonl` and a `metadata.json` beside
 *   it (`env` or `env_id`, `model`, `sampling_args`, `rollouts_per_example`, `avg_<metric>`).
 *   A line is a RolloutOutput: `example_id` (`id` in older files) groups the rollouts of
 *   one example; `prompt` / `completion` are chat messages whose assistant `tool_calls`
 *   may be stored as JSON strings; reward functions and other metrics are flattened to
 *   top-level numbers (newer files also keep a `metrics` object); timing is `timing` or
 *   the older `generation_ms` / `scoring_ms` / `total_ms`.
 * - Hosted-RL exports of the same rollouts store structured fields as JSON text (`prompt`,
 *   `completion`, `metrics`, `info`), group by `problem_id` (one `sample_id` per rollout),
 *   and add the training `step` and `advantage`.
 *
 * Both go through prime-rl's reading of a RolloutOutput (primeRl.ts `fromOutput`), after
 * the shapes above are put in its terms. The metadata (env, model, sampling) goes into
 * each rollout's `extra`, and the env names the data source and the run's task domain.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { documentTooLarge, maxDocumentBytes } from './documentSize';
import path from 'node:path';
import { normalizeDomain, type Split } from '../../model';
import { ImportError, type ImporterItem } from '../rows';
import { fromOutput } from './primeRl';
import { readRecordLines } from './recordLines';
import type { Importer, ReadOptions } from './types';
import { describeType, isRecord } from './util';

type Obj = Record<string, unknown>;

/** Fields that are not metrics, though numeric. */
const NOT_METRICS = new Set(['reward', 'advantage', 'step', 'example_id', 'id', 'problem_id', 'sample_id', 'generation_ms', 'scoring_ms', 'total_ms', 'is_completed', 'is_truncated']);
/** Fields an export may store as JSON text. */
const JSON_TEXT = ['prompt', 'completion', 'metrics', 'info', 'timing', 'token_usage'];

interface Metadata {
  env: string | null;
  model: string | null;
  sampling: unknown;
  /** Metric names metadata.json averages (`avg_<name>`, `avg_metrics`). */
  metrics: string[];
}

function readMetadata(file: string): Metadata | string {
  const meta = path.join(path.dirname(file), 'metadata.json');
  const none: Metadata = { env: null, model: null, sampling: null, metrics: [] };
  if (!existsSync(meta)) return none;
  const tooLarge = documentTooLarge(meta, statSync(meta).size, maxDocumentBytes());
  if (tooLarge) return `${tooLarge.message}; it is read to import ${path.basename(file)}`;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(meta, 'utf8'));
  } catch (err) {
    return `${meta}: not valid JSON (${(err as Error).message}); fix or remove it to import ${path.basename(file)}`;
  }
  if (!isRecord(doc)) return `${meta}: expected an object (vf-eval metadata), got ${describeType(doc)}`;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
  const metrics = Object.keys(doc).filter((k) => k.startsWith('avg_') && k !== 'avg_reward' && k !== 'avg_metrics').map((k) => k.slice(4));
  if (isRecord(doc.avg_metrics)) metrics.push(...Object.keys(doc.avg_metrics));
  return { env: str(doc.env_id) ?? str(doc.env), model: str(doc.model), sampling: doc.sampling_args ?? null, metrics };
}

/** A field stored as JSON text, parsed; anything else as it is. */
function unText(v: unknown): unknown {
  if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** A vf-eval or hosted-RL line in RolloutOutput terms. */
function normalize(line: Obj, meta: Metadata): Obj {
  const v: Obj = { ...line };
  for (const key of JSON_TEXT) if (key in v) v[key] = unText(v[key]);
  if (v.example_id === undefined) v.example_id = v.id ?? v.problem_id;
  if (!isRecord(v.metrics)) {
    const names = meta.metrics.length ? meta.metrics : Object.keys(v).filter((k) => !NOT_METRICS.has(k) && (typeof v[k] === 'number' || typeof v[k] === 'boolean'));
    v.metrics = Object.fromEntries(names.filter((k) => typeof v[k] === 'number' || typeof v[k] === 'boolean').map((k) => [k, v[k]]));
  }
  // The flattened copies are in `metrics` now.
  for (const k of Object.keys(v.metrics as Obj)) if (k !== 'reward') delete v[k];
  if (!isRecord(v.timing) && typeof v.total_ms === 'number') {
    v.timing = { total_ms: v.total_ms, generation_ms: v.generation_ms, scoring_ms: v.scoring_ms };
    for (const k of ['total_ms', 'generation_ms', 'scoring_ms']) delete v[k];
  }
  if (v.env_name === undefined && meta.env) v.env_name = meta.env;
  // The tool schemas repeat on every line; they say nothing about the rollout.
  if (isRecord(v.info) && 'oai_tools' in v.info) v.info = Object.fromEntries(Object.entries(v.info).filter(([k]) => k !== 'oai_tools'));
  if (meta.model) v.model = meta.model;
  if (meta.sampling !== null) v.sampling_args = meta.sampling;
  return v;
}

export const verifiersImporter: Importer = {
  format: 'verifiers',
  description: 'verifiers vf-eval results.jsonl (+ metadata.json) and hosted-RL rollout exports',
  followable: true,
  domainOf(file) {
    const meta = readMetadata(file);
    return typeof meta === 'string' ? null : normalizeDomain(meta.env);
  },
  matches(file, head) {
    if (!file.endsWith('.jsonl') || !/^\s*\{/.test(head)) return false;
    if (!/"prompt"\s*:/.test(head) || !/"completion"\s*:/.test(head)) return false;
    return /"(example_id|id|problem_id)"\s*:/.test(head) && (path.basename(file) === 'results.jsonl' || /"(reward|advantage)"\s*:/.test(head));
  },
  async *read(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
    const meta = readMetadata(file);
    if (typeof meta === 'string') throw new ImportError(file, null, meta);
    yield* readRecordLines(file, opts, (line) => {
      const v = normalize(line, meta);
      const step = typeof v.step === 'number' && Number.isInteger(v.step) ? v.step : 0;
      // An evaluation unless it carries training signal (a step or an advantage).
      const fallbackSplit: Split = opts.split ?? ('step' in v || 'advantage' in v ? 'train' : 'val');
      return fromOutput(v, { step, pathSplit: null, fallbackSplit });
    });
  },
};

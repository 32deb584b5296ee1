/**
 * prime-rl: the rollout traces its orchestrator saves at every step.
 *
 * Layout (PrimeIntellect-ai/prime-rl#2983, "save all rollouts, not just the effective ones"):
 * `{output_dir}/rollouts/step_{N}/{train|eval}/{all|effective}/traces.jsonl`; `all/` is
 * appended one rollout at a time as each completes (errored and filtered ones included),
 * `effective/` holds the batch that shipped to the trainer. Before that change the same
 * records went to `rollouts/step_{N}/{train|eval}_rollouts.jsonl` (#2248); both are read.
 *
 * A line is `Rollout.to_record()` (src/prime_rl/orchestrator/types.py): the verifiers
 * rollout output plus prime-rl's orchestration metadata (`kind`, `env_name`, `group_id`,
 * `policy_version`, `off_policy_steps`, `eval_step`, `advantage`, `filters`). The rollout
 * output comes in one of two shapes, by verifiers version:
 *
 * - verifiers `RolloutOutput` (verifiers/types.py): `example_id`, `task`, `prompt`,
 *   `completion` (text or chat messages; multi-turn tool use as OpenAI-style assistant
 *   `tool_calls` and `tool` messages), `answer`, `info`, `reward`, `metrics` (one entry per
 *   reward function and other rubric metrics), `stop_condition`, `is_truncated`,
 *   `is_completed`, `timing`, `error`, `trajectory`, `token_usage`, `tool_defs`.
 * - verifiers v1 `Trace` (verifiers/v1/trace.py, `Trace.to_record`): a message graph
 *   `nodes[{parent, message, sampled}]`, `rewards{name: {score, weight}}`, `metrics`,
 *   `task{type, data, key, hash}`, `errors`, `stop_condition`, `calls[{usage}]`.
 */
import type { Split } from '../../model';
import type { ImporterItem, RolloutRecord, StepRecord, TokenSeries } from '../rows';
import { classifyCommand } from './actions';
import { parsePythonJson } from './pythonJson';
import { readRecordLines } from './recordLines';
import { contentText, shellCommand, toolCallText, toolCalls } from './messages';
import { describeType, isRecord, posix } from './util';
import { differsFromJs, ident, jsonKind, numberAsJs, NUMERIC, sqlString, wholeNumbersAsJs } from './bulkSql';
import type { BulkPlan, Importer, ReadOptions } from './types';

const PATH = /(?:^|\/)rollouts\/step_(\d+)\/(?:(train|eval)\/(all|effective)\/traces|(train|eval)_rollouts)\.jsonl$/;

type Message = { role: string; content: unknown } & Record<string, unknown>;
type Record_ = Record<string, unknown>;

export interface Context {
  step: number;
  /** train or eval from the path (`…/train/…`, `…/eval/…`). */
  pathSplit: Split | null;
  /** When neither the path nor the record's `kind` says (CLI --split, else train). */
  fallbackSplit: Split;
}

export const primeRlImporter: Importer = {
  format: 'prime-rl',
  description: 'prime-rl rollout traces: rollouts/step_{N}/{train|eval}/{all|effective}/traces.jsonl',
  followable: true,

  matches(file: string, head: string): boolean {
    if (!PATH.test(posix(file))) return false;
    return /^\s*\{/.test(head) && /"(example_id|prompt|completion|reward|nodes|rewards|task)"\s*:/.test(head);
  },

  bulk,

  async *read(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
    const m = PATH.exec(posix(file));
    const pathSplit = m?.[2] ?? m?.[4];
    const ctx: Context = {
      step: m ? Number(m[1]) : 0,
      pathSplit: pathSplit === 'eval' ? 'val' : pathSplit === 'train' ? 'train' : null,
      fallbackSplit: opts.split ?? 'train',
    };
    yield* readRecordLines(file, opts, (value) => (Array.isArray(value['nodes']) && !('completion' in value) ? fromTrace(value, ctx) : fromOutput(value, ctx)));
  },
};

/** Keys of a verifiers RolloutOutput record mapped to RolloutRecord fields (or dropped). */
const OUTPUT_MAPPED = new Set(['prompt', 'completion', 'reward', 'metrics', 'example_id', 'answer', 'stop_condition', 'error', 'advantage', 'group_id', 'group', 'env_name']);
/** Per-token data: not kept with the rollout (its log-probabilities go to the token table, see trajectoryTokens). */
const OUTPUT_DROPPED = new Set(['trajectory']);

/** A list of numbers (null as NaN: a token the server gave no value for); null when it is not one. */
function numberList(v: unknown): number[] | null {
  if (!Array.isArray(v) || !v.length) return null;
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x === 'number') out[i] = x;
    else if (x === null) out[i] = NaN;
    else return null;
  }
  return out;
}

/**
 * The per-token values of each model call a verifiers rollout carries: `trajectory[i].tokens`
 * (`TrajectoryStepTokens`: `completion_ids`, `completion_mask`, `completion_logprobs`), and
 * entropies where a trainer adds them (`completion_entropies`). `turn` is the call's ordinal,
 * the n-th assistant message of the completion.
 */
export function trajectoryTokens(trajectory: unknown): TokenSeries[] {
  if (!Array.isArray(trajectory)) return [];
  const out: TokenSeries[] = [];
  trajectory.forEach((step, turn) => {
    const tokens = isRecord(step) ? step['tokens'] : null;
    if (!isRecord(tokens)) return;
    const logprobs = numberList(tokens['completion_logprobs']);
    if (logprobs) out.push({ turn, kind: 'logprob', values: logprobs });
    const entropies = numberList(tokens['completion_entropies'] ?? tokens['entropies']);
    if (entropies) out.push({ turn, kind: 'entropy', values: entropies });
  });
  return out;
}

/** A verifiers RolloutOutput (+ prime-rl metadata) as a RolloutRecord, or what is wrong with it. */
export function fromOutput(v: Record_, ctx: Context): RolloutRecord | string {
  const prompt = textOrMessages(v['prompt']);
  if (typeof prompt === 'object' && 'invalid' in prompt) return `prompt${prompt.invalid}`;
  const error = v['error'];
  let response: string | Message[];
  if (v['completion'] === null && error !== null && error !== undefined) response = []; // errored before completing
  else {
    const completion = textOrMessages(v['completion']);
    if (typeof completion === 'object' && 'invalid' in completion) return `completion${completion.invalid}`;
    response = completion;
  }
  const reward = v['reward'];
  if (reward !== undefined && reward !== null && typeof reward !== 'number') return `reward: expected a number or null, got ${describeType(reward)}`;
  const metrics = numberMap(v['metrics'], 'metrics');
  if (typeof metrics === 'string') return metrics;
  const exampleId = v['example_id'];
  if (exampleId !== undefined && exampleId !== null && typeof exampleId !== 'number' && typeof exampleId !== 'string') {
    return `example_id: expected an integer or a string, got ${describeType(exampleId)}`;
  }
  const answer = v['answer'];
  const meta = orchestration(v, ctx);
  if (typeof meta === 'string') return meta;

  const timing = v['timing'];
  const totalMs = isRecord(timing) && typeof timing['total_ms'] === 'number' ? timing['total_ms'] : null;
  const usage = v['token_usage'];
  const outputTokens = isRecord(usage) && typeof usage['output_tokens'] === 'number' ? usage['output_tokens'] : null;
  const stop = v['stop_condition'];

  const extra: Record_ = {};
  for (const [key, value] of Object.entries(v)) if (!OUTPUT_MAPPED.has(key) && !OUTPUT_DROPPED.has(key)) extra[key] = value;

  const promptId = exampleId === undefined || exampleId === null ? null : String(exampleId);
  const steps = Array.isArray(response) ? toSteps(response) : undefined;
  const tokens = trajectoryTokens(v['trajectory']);
  return {
    step: ctx.step,
    split: meta.split,
    promptId,
    groupId: meta.groupId ?? (promptId === null ? null : `${ctx.step}:${meta.split}:${meta.env ?? ''}:${promptId}`),
    prompt,
    response,
    groundTruth: typeof answer === 'string' && answer !== '' ? answer : null,
    reward: typeof reward === 'number' && !Number.isNaN(reward) ? reward : null,
    rewardComponents: metrics,
    correct: null,
    extractedAnswer: null,
    advantage: meta.advantage,
    stopReason: typeof stop === 'string' ? stop : null,
    responseTokens: outputTokens,
    numTurns: Array.isArray(response) ? response.filter((msg) => msg.role === 'assistant').length : 1,
    errors: errorTexts(error),
    timingMs: totalMs,
    dataSource: meta.env ?? (typeof v['task'] === 'string' ? v['task'] : null),
    envClass: null,
    extra,
    ...(steps ? { steps } : {}),
    ...(tokens.length ? { tokens } : {}),
  };
}

const TRACE_MAPPED = new Set(['nodes', 'rewards', 'metrics', 'errors', 'stop_condition', 'advantage', 'group_id', 'group', 'env_name']);
/** Token-level and per-call data, and the agent's full config: too large to keep per rollout. */
const TRACE_DROPPED = new Set(['calls', 'agent', 'tools', 'mm_token_type_id_map', 'request_rewrites', 'response_rewrites', 'extra_usage']);

/** A verifiers v1 Trace (+ prime-rl metadata) as a RolloutRecord. */
function fromTrace(v: Record_, ctx: Context): RolloutRecord | string {
  const nodes = v['nodes'] as unknown[];
  for (const [i, node] of nodes.entries()) {
    if (!isRecord(node) || !isMessage(node['message'])) return `nodes[${i}].message: expected a chat message {role, content}, got ${describeType(isRecord(node) ? node['message'] : node)}`;
  }
  const graph = nodes as { parent?: unknown; message: Message; sampled?: unknown }[];
  // The final branch: from the last node back to its root (Trace.messages).
  const path: number[] = [];
  for (let id: unknown = graph.length - 1; typeof id === 'number' && id >= 0 && id < graph.length && path.length <= graph.length; id = graph[id]!.parent) path.unshift(id);
  const first = path.findIndex((id) => graph[id]!.sampled === true);
  const cut = first === -1 ? path.length : first;
  const prompt = path.slice(0, cut).map((id) => graph[id]!.message);
  const response = path.slice(cut).map((id) => graph[id]!.message);

  const rewards = v['rewards'];
  if (rewards !== undefined && rewards !== null && !isRecord(rewards)) return `rewards: expected an object of {score, weight}, got ${describeType(rewards)}`;
  const components: Record<string, number> = {};
  let reward: number | null = null;
  for (const [name, r] of Object.entries(rewards ?? {})) {
    if (r === null) continue; // scoring did not run
    if (!isRecord(r) || typeof r['score'] !== 'number') return `rewards.${name}: expected {score, weight} or null, got ${describeType(r)}`;
    const weight = typeof r['weight'] === 'number' ? r['weight'] : 1;
    components[name] = r['score'];
    reward = (reward ?? 0) + r['score'] * weight;
  }
  const metrics = numberMap(v['metrics'], 'metrics');
  if (typeof metrics === 'string') return metrics;
  const meta = orchestration(v, ctx);
  if (typeof meta === 'string') return meta;

  const task = isRecord(v['task']) ? v['task'] : {};
  const data = isRecord(task['data']) ? task['data'] : {};
  const promptId = typeof task['key'] === 'string' ? task['key'] : typeof task['hash'] === 'string' ? task['hash'] : null;
  let outputTokens: number | null = null;
  for (const call of Array.isArray(v['calls']) ? v['calls'] : []) {
    const usage = isRecord(call) ? call['usage'] : undefined;
    const n = isRecord(usage) ? (usage['completion_tokens'] ?? usage['output_tokens']) : undefined;
    if (typeof n === 'number') outputTokens = (outputTokens ?? 0) + n;
  }
  const stop = v['stop_condition'];
  const errors = Array.isArray(v['errors']) ? v['errors'].map((e) => errorTexts(e)[0] ?? '').filter(Boolean) : [];
  const extra: Record_ = {};
  for (const [key, value] of Object.entries(v)) if (!TRACE_MAPPED.has(key) && !TRACE_DROPPED.has(key)) extra[key] = value;

  const steps = toSteps(response);
  return {
    step: ctx.step,
    split: meta.split,
    promptId,
    groupId: meta.groupId ?? (promptId === null ? null : `${ctx.step}:${meta.split}:${meta.env ?? ''}:${promptId}`),
    prompt,
    response,
    groundTruth: typeof data['answer'] === 'string' ? data['answer'] : null,
    reward,
    rewardComponents: { ...components, ...metrics },
    correct: null,
    extractedAnswer: null,
    advantage: meta.advantage,
    stopReason: typeof stop === 'string' ? stop : null,
    responseTokens: outputTokens,
    numTurns: path.filter((id) => graph[id]!.sampled === true).length,
    errors,
    timingMs: null,
    dataSource: meta.env ?? (typeof task['type'] === 'string' ? task['type'] : null),
    envClass: null,
    extra,
    ...(steps ? { steps } : {}),
  };
}

/** prime-rl's own fields on a record. */
function orchestration(v: Record_, ctx: Context): { split: Split; groupId: string | null; env: string | null; advantage: number | null } | string {
  const env = v['env_name'];
  if (env !== undefined && env !== null && typeof env !== 'string') return `env_name: expected a string, got ${describeType(env)}`;
  const group = v['group_id'] ?? (isRecord(v['group']) ? v['group']['id'] : undefined);
  if (group !== undefined && group !== null && typeof group !== 'string' && typeof group !== 'number') return `group_id: expected a string, got ${describeType(group)}`;
  const advantage = v['advantage'];
  if (advantage !== undefined && advantage !== null && typeof advantage !== 'number') return `advantage: expected a number, got ${describeType(advantage)}`;
  const recordKind = v['kind'];
  // The path says train or eval; a record read away from its path says it with `kind`.
  const split: Split = ctx.pathSplit ?? (recordKind === 'eval' ? 'val' : recordKind === 'train' ? 'train' : ctx.fallbackSplit);
  return {
    split,
    groupId: group === undefined || group === null ? null : String(group),
    env: typeof env === 'string' && env ? env : null,
    advantage: typeof advantage === 'number' && Number.isFinite(advantage) ? advantage : null,
  };
}

/**
 * The turns of a multi-turn completion, when it has tool use or several assistant turns:
 * one assistant step per tool call (a shell command is classified into edit / search /
 * test / submit / command), one per plain assistant message, one observation per tool
 * result or environment message.
 */
function toSteps(messages: Message[]): StepRecord[] | undefined {
  const assistants = messages.filter((m) => m.role === 'assistant').length;
  const toolUse = messages.some((m) => m.role === 'tool' || toolCalls(m).length > 0);
  if (!toolUse && assistants <= 1) return undefined;
  const steps: StepRecord[] = [];
  const base = { command: null, exitCode: null, observationBytes: null, formatError: false, timeout: false, truncated: false, tokens: null };
  for (const m of messages) {
    if (m.role === 'assistant') {
      const calls = toolCalls(m);
      if (!calls.length) steps.push({ ...base, role: 'assistant', actionKind: 'message' });
      for (const call of calls) {
        const command = shellCommand(call.name, call.args);
        // A non-shell tool is an action of its own; only a `submit` tool name is telling.
        const actionKind = command !== null ? classifyCommand(command) : classifyCommand(call.name) === 'submit' ? 'submit' : 'other';
        steps.push({ ...base, role: 'assistant', actionKind, command: command ?? toolCallText(call) });
      }
    } else if (m.role === 'tool' || m.role === 'user') {
      steps.push({ ...base, role: m.role, actionKind: 'observation', observationBytes: Buffer.byteLength(contentText(m.content), 'utf8') });
    } else if (m.role === 'system') {
      steps.push({ ...base, role: 'system', actionKind: 'other' });
    }
  }
  return steps;
}

function textOrMessages(value: unknown): string | Message[] | { invalid: string } {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const bad = value.findIndex((m) => !isMessage(m));
    if (bad === -1) return value as Message[];
    return { invalid: `[${bad}]: expected a chat message {role, content}, got ${describeType(value[bad])}` };
  }
  return { invalid: `: expected a string or a list of chat messages, got ${describeType(value)}` };
}

function numberMap(value: unknown, name: string): Record<string, number> | string {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) return `${name}: expected an object of numbers, got ${describeType(value)}`;
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(value)) {
    if (n === null) continue; // NaN in the dump, or not computed
    if (typeof n === 'number') out[key] = n;
    else if (typeof n === 'boolean') out[key] = n ? 1 : 0;
    else return `${name}.${key}: expected a number, got ${describeType(n)}`;
  }
  return out;
}

function errorTexts(error: unknown): string[] {
  if (error === null || error === undefined || error === '') return [];
  if (typeof error === 'string') return [error];
  if (isRecord(error)) {
    for (const key of ['error_chain_str', 'message', 'error']) {
      const text = error[key];
      if (typeof text === 'string' && text) return [typeof error['type'] === 'string' && key === 'message' ? `${error['type']}: ${text}` : text];
    }
  }
  return [JSON.stringify(error)];
}

function isMessage(m: unknown): m is Message {
  return isRecord(m) && typeof m['role'] === 'string';
}





/**
 * DuckDB reads a file of verifiers RolloutOutput records itself (the bulk path) when every
 * record has the keys of the first, in its order, and each maps column to column: what
 * `fromOutput` makes of it is computed in SQL. A record that would have steps (tool use, or
 * several assistant turns) or per-token values, or that holds a value this SQL cannot be
 * sure to store as `fromOutput` does (a number JavaScript would write otherwise, an error
 * object without a message), is marked bad, and its file streamed. Trace records (`nodes`)
 * are always streamed.
 */
function bulk(file: string, head: string): BulkPlan | null {
  const m = PATH.exec(posix(file));
  const nl = head.indexOf('\n');
  if (!m || nl === -1) return null;
  let first: unknown;
  try {
    first = JSON.parse(head.slice(0, nl));
  } catch {
    first = parsePythonJson(head.slice(0, nl))?.value; // NaN, as json.dumps writes it
  }
  if (!isRecord(first) || 'nodes' in first || 'group' in first || !('prompt' in first) || !('completion' in first)) return null;
  const keys = Object.keys(first);
  const metricKeys = isRecord(first['metrics']) ? Object.keys(first['metrics']) : [];
  // JavaScript orders whole-number keys first, and DuckDB's JSON paths cannot name every key.
  if ([...keys, ...metricKeys].some((k) => /^(0|[1-9]\d*)$/.test(k) || /["\\]/.test(k))) return null;
  const pathSplit = m[2] ?? m[4];
  const has = (k: string) => keys.includes(k);
  const c = ident;
  // JSON null reads as SQL null: both are 'NULL' here. Only 'VARCHAR', 'ARRAY' and 'OBJECT' are told apart.
  const type = (k: string) => jsonKind(c(k));
  const isNum = (x: string) => `json_type(${x}) in ${NUMERIC}`;
  const finite = (x: string) => `case when ${isNum(x)} and isfinite((${x})::double) then (${x})::double end`;
  const str = (k: string) => `(${c(k)} ->> '$')`;
  const bad: string[] = [];
  /** null, a string or a number (as String(n), see numberAsJs); anything else is bad. */
  const idText = (k: string) => {
    if (!has(k)) return 'null::varchar';
    bad.push(`(${c(k)} is not null and ${type(k)} <> 'VARCHAR' and ${numberAsJs(c(k))} is null)`);
    return `case when ${type(k)} = 'VARCHAR' then ${str(k)} else ${numberAsJs(c(k))} end`;
  };

  // prompt and completion: text, or chat messages stored as their JSON text. The file's scan
  // (ShapeCheck.messages) streams a file where a list is not of flat messages, each with a
  // string role and text, true, false or null values: then DuckDB writes the list as
  // JSON.stringify does, and a role shows in the text as "role":"assistant" exactly.
  bad.push(`${type('prompt')} not in ('VARCHAR', 'ARRAY')`);
  const errored = has('error') ? `${c('error')} is not null` : 'false';
  const completion = `${c('completion')}::varchar`;
  const assistant = `'"role":"assistant"'`;
  const assistants = `(case when contains(${completion}, ${assistant}) then 1 else 0 end)`;
  // Steps come from tool results, tool calls or several assistant turns: the scan
  // (ShapeCheck.singleTurn; tool calls are lists) streams a file that has them.
  bad.push(`not (${type('completion')} in ('VARCHAR', 'ARRAY') or (${c('completion')} is null and ${errored}))`);

  if (has('reward')) bad.push(`(${c('reward')} is not null and not ${isNum(c('reward'))})`);
  if (has('advantage')) bad.push(`(${c('advantage')} is not null and not ${isNum(c('advantage'))})`);
  if (has('env_name')) bad.push(`(${c('env_name')} is not null and ${type('env_name')} <> 'VARCHAR')`);
  const exampleId = idText('example_id');
  const groupId = idText('group_id');
  // Per-token values go to the token table: streamed.
  if (has('trajectory')) bad.push(`(${c('trajectory')} is not null and not (${type('trajectory')} = 'ARRAY' and json_array_length(${c('trajectory')}) = 0))`);

  // metrics: numbers (booleans as 1 / 0) under the first record's keys, in its order; null and NaN are left out.
  let components = 'null::varchar';
  if (has('metrics')) {
    if (!isRecord(first['metrics']) || !metricKeys.length) {
      bad.push(`(${c('metrics')} is not null and not (${type('metrics')} = 'OBJECT' and len(json_keys(${c('metrics')})) = 0))`);
    } else {
      const values = `json_extract(${c('metrics')}, [${metricKeys.map((k) => sqlString(`$."${k}"`)).join(', ')}])`;
      // Each value as JSON: NaN and infinities (Python's bare tokens) read as null and are left out, as null is.
      const v = (i: number) => `${values}[${i + 1}]`;
      bad.push(`(${c('metrics')} is not null and (${type('metrics')} <> 'OBJECT' or json_keys(${c('metrics')}) <> [${metricKeys.map(sqlString).join(', ')}]))`);
      const parts = metricKeys.map((k, i) => {
        bad.push(`(${c('metrics')} is not null and ${jsonKind(v(i))} in ('VARCHAR', 'ARRAY', 'OBJECT'))`);
        const name = sqlString(`${JSON.stringify(k)}:`);
        return `case ${v(i)}::varchar when 'true' then ${name} || '1' when 'false' then ${name} || '0' else ${name} || ${numberAsJs(v(i))} end`;
      });
      components = `nullif('{' || concat_ws(',', ${parts.join(', ')}) || '}', '{}')`;
    }
  }

  // error: its text, as errorTexts gives it; an error of another shape is streamed.
  let errors = 'null::varchar';
  if (has('error')) {
    const e = c('error');
    const field = (f: string) => `case when json_type(${e}, '$.${f}') = 'VARCHAR' and (${e} ->> '$.${f}') <> '' then ${e} ->> '$.${f}' end`;
    const fromObject = `coalesce(${field('error_chain_str')}, case when ${field('message')} is not null then coalesce((case when json_type(${e}, '$.type') = 'VARCHAR' then (${e} ->> '$.type') || ': ' end), '') || ${field('message')} end, ${field('error')})`;
    const text = `case when ${type('error')} = 'VARCHAR' then nullif(${str('error')}, '') when ${type('error')} = 'OBJECT' then ${fromObject} end`;
    bad.push(`(${e} is not null and not (${type('error')} = 'VARCHAR' or (${type('error')} = 'OBJECT' and ${fromObject} is not null)))`);
    errors = `case when ${text} is not null then '[' || to_json(${text})::varchar || ']' end`;
    bad.push(`(${text} is not null and ${differsFromJs(`to_json(${text})::varchar`, false)})`);
  }

  // token_usage.output_tokens, stored as a whole number the store's integer column holds.
  let responseTokens = 'null::integer';
  if (has('token_usage')) {
    const t = `${c('token_usage')} -> '$.output_tokens'`;
    const n = `case when ${type('token_usage')} = 'OBJECT' then ${finite(t)} end`;
    bad.push(`coalesce(trunc(${n}) not between -2147483648 and 2147483647, false)`);
    responseTokens = `trunc(${n})::integer`;
  }

  // Everything else goes to extra, as JSON.stringify writes it.
  const extraKeys = keys.filter((k) => !OUTPUT_MAPPED.has(k) && !OUTPUT_DROPPED.has(k));
  let extra = 'null::varchar';
  if (extraKeys.length) {
    const raw = `'{' || concat(${extraKeys.map((k, i) => `${sqlString(`${i ? ',' : ''}${JSON.stringify(k)}:`)}, coalesce(${c(k)}::varchar, 'null')`).join(', ')}) || '}'`;
    // Its numbers are checked by the file's scan (ShapeCheck.jsonText), the rest here.
    extra = wholeNumbersAsJs(raw);
    bad.push(differsFromJs(raw, true));
  }

  const env = has('env_name') ? `nullif(case when ${type('env_name')} = 'VARCHAR' then ${str('env_name')} end, '')` : 'null::varchar';
  const task = has('task') ? `case when ${type('task')} = 'VARCHAR' then ${str('task')} end` : 'null::varchar';
  const promptId = exampleId;
  const numTurns = `case when ${type('completion')} = 'VARCHAR' then 1 when ${type('completion')} = 'ARRAY' then ${assistants} else 0 end`;
  const projection = `
      file_step as step,
      file_split as split,
      case when ${type('prompt')} = 'VARCHAR' then ${str('prompt')} else ${c('prompt')}::varchar end as prompt,
      case when ${type('prompt')} = 'VARCHAR' then 'text' else 'messages' end as prompt_format,
      case when ${type('completion')} = 'VARCHAR' then ${str('completion')} when ${c('completion')} is null then '[]' else ${c('completion')}::varchar end as response,
      case when ${type('completion')} = 'VARCHAR' then 'text' else 'turns' end as response_format,
      ${has('answer') ? `nullif(case when ${type('answer')} = 'VARCHAR' then ${str('answer')} end, '')` : 'null::varchar'} as ground_truth,
      ${has('reward') ? finite(c('reward')) : 'null::double'} as reward,
      ${components} as reward_components,
      null::boolean as correct,
      null::varchar as extracted_answer,
      ${promptId} as prompt_id,
      coalesce(${groupId}, case when ${promptId} is not null then file_step || ':' || file_split || ':' || coalesce(${env}, '') || ':' || ${promptId} end) as group_id,
      ${has('advantage') ? finite(c('advantage')) : 'null::double'} as advantage,
      ${has('stop_condition') ? `case when ${type('stop_condition')} = 'VARCHAR' then ${str('stop_condition')} end` : 'null::varchar'} as stop_reason,
      ${responseTokens} as response_tokens,
      ${numTurns} as num_turns,
      ${errors} as errors,
      ${has('timing') ? `case when ${type('timing')} = 'OBJECT' then ${finite(`${c('timing')} -> '$.total_ms'`)} end` : 'null::double'} as timing_ms,
      coalesce(${env}, ${task}) as data_source,
      ${extra} as extra,
      (${bad.map((b) => `coalesce(${b}, false)`).join('\n        or ')}) as bad`;
  const columns = `{${keys.map((k) => `${sqlString(k)}: 'JSON'`).join(', ')}}`;
  return {
    signature: `${keys.join('\u0000')}\u0001${metricKeys.join('\u0000')}`,
    columns,
    projection,
    fileStep: Number(m[1]),
    fileSplit: pathSplit === 'eval' ? 'val' : 'train',
    keys,
    messages: ['prompt', 'completion'],
    singleTurn: 'completion',
    // Their numbers are stored as DuckDB writes them (see numberAsJs, wholeNumbersAsJs).
    jsonText: [...extraKeys, ...['metrics', 'example_id', 'group_id'].filter(has)],
    optional: ['prompt_id', 'group_id', 'prompt_format', 'response_format', 'advantage', 'stop_reason', 'response_tokens', 'num_turns', 'errors', 'timing_ms'],
  };
}

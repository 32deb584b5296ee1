import type { RolloutRecord, StepRecord } from '../rows';
import { classifyCommand, extractBashBlock } from './actions';
import { readJsonLines } from './jsonLines';
import { differsFromJs, ident, numberAsJs, NUMERIC, sqlString, wholeNumbersAsJs } from './bulkSql';
import type { BulkPlan, Importer } from './types';
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

/** A turn boundary of a chat template (Qwen / ChatML) inside a decoded response. */
export const TURN_MARKER = /<\|im_start\|>|<\|im_end\|>/;
/** An `"output"` string value holding a turn marker (the value may run past the head). */
const MULTI_TURN_OUTPUT = /"output"\s*:\s*"(?:[^"\\]|\\.)*?(?:<\|im_start\|>|<\|im_end\|>)/;
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
/**
 * A multi-turn transcript decoded without special tokens (verl's dump decodes with
 * `skip_special_tokens=True`): the template's role headers stay as bare lines, so a tool
 * round trip reads `…</tool_call>\nuser\n<tool_response>…</tool_response>\nassistant\n…`.
 * That round trip marks it; a bare "user" line alone could be the model's own text.
 */
const PLAIN_TOOL_ROUND = /<\/tool_call>\s*\nuser\n<tool_response>/;
/** The same in a dump line's raw JSON (newlines escaped), for the bulk path's look at the head. */
const PLAIN_MULTI_TURN_OUTPUT = /"output"\s*:\s*"(?:[^"\\]|\\.)*?<\/tool_call>(?:\s|\\n)*\\nuser\\n<tool_response>/;

/**
 * What marks an `output` as multi-turn in a dump line's raw JSON, for the bulk path's scan of
 * the whole file: a chat-template marker, or a plain tool round (see PLAIN_TOOL_ROUND).
 * A single-turn answer that merely holds one of them is streamed, which reads it right too.
 */
const MULTI_TURN_TEXTS = ['<|im_', '\\nuser\\n<tool_response>'];

/** Puts the chat template's turn markers back where a plain transcript's tool round trips are. */
function markPlainTurns(text: string): string {
  return text.replace(/\nuser\n(?=<tool_response>)/g, '<|im_end|>\n<|im_start|>user\n').replace(/(<\/tool_response>)\nassistant\n/g, '$1<|im_end|>\n<|im_start|>assistant\n');
}

/**
 * The turns of a chat-template transcript, as verl's multi-turn rollouts decode them: the
 * text before the first `<|im_start|>` continues the prompt's open assistant turn, then
 * `<|im_start|>ROLE\n…<|im_end|>` per turn. A tool result comes back as a user turn
 * holding `<tool_response>…</tool_response>` (or a `tool` turn), with the command's exit
 * status as `<returncode>N</returncode>` when the environment reports it.
 */
export function chatTurns(text: string): { role: string; content: string }[] {
  const turns: { role: string; content: string }[] = [];
  const parts = text.split('<|im_start|>');
  const clean = (s: string) => s.replace(/<\|im_end\|>[\s\S]*$/, '').trim();
  const lead = clean(parts[0]!);
  if (lead) turns.push({ role: 'assistant', content: lead });
  for (const part of parts.slice(1)) {
    const nl = part.indexOf('\n');
    const role = (nl === -1 ? part : part.slice(0, nl)).trim();
    const content = clean(nl === -1 ? '' : part.slice(nl + 1));
    if (!content && role === 'assistant') continue; // the generation prompt's open header
    turns.push({ role: ROLES.has(role) ? role : 'user', content });
  }
  return turns;
}

/** Steps of a multi-turn verl rollout: the prompt's messages, then each assistant command and tool result. */
function chatSteps(prompt: string, output: string): StepRecord[] {
  const steps: StepRecord[] = [];
  const base = { command: null, exitCode: null, formatError: false, timeout: false, truncated: false, tokens: null };
  for (const t of chatTurns(prompt)) {
    steps.push({ ...base, role: t.role === 'system' ? 'system' : 'user', actionKind: 'message', observationBytes: Buffer.byteLength(t.content, 'utf8') });
  }
  const turns = chatTurns(output);
  turns.forEach((t, i) => {
    if (t.role === 'assistant') {
      const { command, count } = extractBashBlock(t.content);
      const toolCall = count === 0 && /<tool_call>[\s\S]*<\/tool_call>/.test(t.content);
      // A last turn without a command is the final answer; earlier, the environment had nothing to run.
      const answer = count === 0 && !toolCall && i === turns.length - 1;
      steps.push({
        ...base,
        role: 'assistant',
        actionKind: count === 1 ? classifyCommand(command) : toolCall ? 'command' : answer ? 'message' : 'other',
        command: count === 1 ? command : null,
        observationBytes: null,
        formatError: count > 1 || (count === 0 && !toolCall && !answer),
      });
    } else if (t.role === 'tool' || /^<tool_response>/.test(t.content)) {
      const body = t.content.replace(/^<tool_response>\s*/, '').replace(/\s*<\/tool_response>$/, '');
      const rc = /<returncode>(-?\d+)<\/returncode>/.exec(body);
      steps.push({
        ...base,
        role: 'tool',
        actionKind: 'observation',
        exitCode: rc ? Number(rc[1]) : null,
        observationBytes: Buffer.byteLength(body, 'utf8'),
        truncated: /<warning>\s*The output of your last command was too long/.test(body),
      });
    } else {
      steps.push({ ...base, role: t.role === 'system' ? 'system' : 'user', actionKind: 'message', observationBytes: Buffer.byteLength(t.content, 'utf8') });
    }
  });
  return steps;
}

/**
 * DuckDB reads the file itself when every line has the keys of the first, in its order
 * (verl writes the same keys for a whole dump); any line that differs marks the file for
 * `read`.
 * Multi-turn dumps (chat-template turn markers in `output`) go to `read`, which splits
 * each transcript into steps.
 */
function bulk(file: string, head: string, opts: { split?: 'train' | 'val' }): BulkPlan | null {
  if (MULTI_TURN_OUTPUT.test(head) || PLAIN_MULTI_TURN_OUTPUT.test(head)) return null;
  const nl = head.indexOf('\n');
  if (nl === -1) return null;
  let first: unknown;
  try {
    first = JSON.parse(head.slice(0, nl));
  } catch {
    return null;
  }
  if (!isRecord(first)) return null;
  const keys = Object.keys(first);
  // JavaScript puts whole-number keys first in the objects the streaming reader stores.
  if (keys.some((k) => /^(0|[1-9][0-9]*)$/.test(k))) return null;
  const extraKeys = keys.filter((k) => !BASE_KEYS.has(k) && k !== 'acc' && k !== 'pred');
  const numeric = extraKeys.filter((k) => typeof first[k] === 'number' && Number.isFinite(first[k]));
  const other = extraKeys.filter((k) => !numeric.includes(k));
  const split = splitOf(file, opts.split);
  const fileStep = stepFromPath(file, /(\d+)\.jsonl$/) ?? 0;
  // Every key is read as JSON: DuckDB parses each line once, and the shape checks below
  // see the original types (a number where text belongs marks the record bad).
  const col = ident;
  const columns = `{${keys.map((k) => `${sqlString(k)}: ${k === 'input' || k === 'output' ? "'VARCHAR'" : "'JSON'"}`).join(', ')}}`;
  const has = (k: string) => keys.includes(k);
  const text = (k: string) => (has(k) ? `case when json_type(${col(k)}) = 'VARCHAR' then ${col(k)} ->> '$' when json_type(${col(k)}) = 'NULL' then null else ${col(k)}::varchar end` : 'null');
  const isNum = (k: string) => `json_type(${col(k)}) in ${NUMERIC}`;
  const obj = (ks: string[], value: (k: string) => string) => (ks.length ? `json_object(${ks.map((k) => `${sqlString(k)}, ${value(k)}`).join(', ')})::varchar` : 'null');
  const badIf = [
    `${col('input')} is null`,
    `${col('output')} is null`,
    has('score') ? `coalesce(json_type(${col('score')}) not in (${NUMERIC.slice(1, -1)}, 'NULL'), false)` : 'false',
    has('acc') ? `coalesce(json_type(${col('acc')}) not in ('BOOLEAN', ${NUMERIC.slice(1, -1)}, 'NULL'), false)` : 'false',
    ...numeric.map((k) => `not coalesce(${isNum(k)}, false)`),
  ];
  // Reward components and extra as JSON.stringify writes them: numbers as the file's scan
  // checked them (ShapeCheck.jsonText), a whole number's `.0` dropped (Python writes 1.0,
  // JavaScript 1); extra text JavaScript would write otherwise marks the record.
  const components = numeric.length ? `'{' || concat(${numeric.map((k, i) => `${sqlString(`${i ? ',' : ''}${JSON.stringify(k)}:`)}, ${numberAsJs(col(k))}`).join(', ')}) || '}'` : 'null';
  const extraRaw = obj(other, (k) => col(k));
  if (other.length) badIf.push(differsFromJs(extraRaw, true));
  const projection = `
      ${has('step') ? `coalesce(case when ${isNum('step')} and isfinite(${col('step')}::double) then trunc(${col('step')}::double)::integer end, file_step)` : 'file_step'} as step,
      file_split as split,
      ${col('input')} as prompt,
      ${col('output')} as response,
      ${text('gts')} as ground_truth,
      ${has('score') ? `case when ${isNum('score')} then ${col('score')}::double end` : 'null'} as reward,
      ${components} as reward_components,
      ${has('acc') ? `case json_type(${col('acc')}) when 'BOOLEAN' then ${col('acc')}::varchar = 'true' when 'NULL' then null else ${col('acc')}::double > 0 end` : 'null'} as correct,
      ${text('pred')} as extracted_answer,
      ${has('data_source') ? `case when json_type(${col('data_source')}) = 'VARCHAR' then ${col('data_source')} ->> '$' end` : 'null'} as data_source,
      ${other.length ? wholeNumbersAsJs(extraRaw) : 'null'} as extra,
      (${badIf.join('\n        or ')}) as bad`;
  // A later line that is a transcript (the head held answers only) sends the file to `read`.
  return { signature: keys.join('\u0000'), columns, projection, fileStep, fileSplit: split, keys, jsonText: extraKeys, markers: { key: 'output', texts: MULTI_TURN_TEXTS } };
}

/**
 * The split a dump belongs to: given, or read from the folder verl wrote it to
 * (`trainer.validation_data_dir`, e.g. `validation_data/`, `val_generations/`). Only that
 * folder's name counts: a train dump under `/data/evaluation/run1/rollout_data/` is train.
 */
function splitOf(file: string, given: 'train' | 'val' | undefined): 'train' | 'val' {
  return given ?? (/val/i.test(posix(file).split('/').slice(-2, -1)[0] ?? '') ? 'val' : 'train');
}

export const verlImporter: Importer = {
  bulk,
  format: 'verl',
  description: 'verl rollout / validation dumps ({global_step}.jsonl with input, output, gts, score, step)',
  followable: true,
  matches(file, head) {
    if (!/(^|\/)\d+\.jsonl$/.test(posix(file))) return false;
    return /"input"\s*:/.test(head) && /"output"\s*:/.test(head) && /"score"\s*:/.test(head);
  },
  async *read(file, opts) {
    const split = splitOf(file, opts.split);
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
      if (r.input === undefined || r.input === null || r.output === undefined || r.output === null) {
        const which = r.input === undefined || r.input === null ? 'input' : 'output';
        yield bad(file, l.line, `"${which}" is missing (verl writes the decoded prompt as "input" and the response as "output")`, JSON.stringify(r).slice(0, 65536), at);
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
      const output = typeof r.output === 'string' ? (!TURN_MARKER.test(r.output) && PLAIN_TOOL_ROUND.test(r.output) ? markPlainTurns(r.output) : r.output) : null;
      const steps = output !== null && TURN_MARKER.test(output) ? chatSteps(typeof r.input === 'string' ? r.input : '', output) : undefined;
      const record: RolloutRecord = {
        step: typeof step === 'number' ? step : fileStep ?? 0,
        split,
        // Text as verl writes it; any other JSON value is kept as its JSON text.
        prompt: typeof r.input === 'string' ? r.input : JSON.stringify(r.input),
        response: typeof r.output === 'string' ? r.output : JSON.stringify(r.output),
        groundTruth: str(r.gts),
        reward: score,
        rewardComponents: components,
        correct: 'acc' in r ? bool(r.acc) : null,
        extractedAnswer: 'pred' in r ? str(r.pred) : null,
        dataSource: typeof r.data_source === 'string' ? r.data_source : null,
        numTurns: steps ? steps.filter((st) => st.role === 'assistant').length : 1,
        extra,
      };
      if (steps) record.steps = steps;
      yield { record, at };
    }
  },
};

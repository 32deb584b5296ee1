/**
 * rLLM episode dumps: `episodes/{train|val}_step_N_epoch_E/episode_hash<task>_id<episode>.json`,
 * one Episode per file, as rLLM's `EpisodeLogger.log_episode` writes them
 * (rllm-org/rllm, rllm/utils/episode_logger.py; classes in rllm/agents/agent.py):
 *
 *   { training_step, epoch, episode_id, [session_id], task, task_hash, is_correct,
 *     termination_reason, metrics, [metadata], timing,
 *     trajectories: [{ name, uid, reward, num_steps, timing,
 *                      steps: [{ observation, thought, action, reward, done,
 *                                model_response, chat_completions, timing }] }] }
 *
 * `Episode.to_dict()` output (`id` instead of `episode_id`, steps with `prompt_ids` /
 * `response_ids` / `info`) is read too. The same directory holds a `batch_summary.json`
 * (from `log_episodes_batch`), which is not an episode: `matches` rejects it and `read`
 * yields nothing for it.
 *
 * Grouping. An rLLM Episode is one rollout of one task; its id is `{task_id}:{rollout_idx}`,
 * where task_id is shared by the n rollouts of one dataset row at one step. rLLM's trainer
 * (rllm/trainer/common/transform.py, `build_trajectory_groups`) groups *trajectories* by
 * task id and trajectory name, so a solver-judge episode feeds two GRPO groups (the
 * solvers, the judges). We follow it: one RolloutRecord per trajectory, groupId
 * `{task_id}:{trajectory name}` (an unnamed trajectory is named by position,
 * `default_traj_name_<i>`, as rLLM's `impute_trajectory_names` does). A one-trajectory
 * episode is thus one record. `correct` is the episode's `is_correct`, shared by all its
 * trajectories; `reward` is the trajectory's.
 */
import { createHash } from 'node:crypto';
import { readWhole } from '../compressed';
import path from 'node:path';
import type { Split } from '../../model';
import { ImportError, type ImporterItem, type RolloutRecord, type StepRecord } from '../rows';
import { classifyCommand, extractBashBlock, type ActionKind } from './actions';
import { parsePythonJson } from './pythonJson';
import type { Importer, ReadOptions } from './types';
import { bad, isRecord as isObj } from './util';

type Obj = Record<string, unknown>;
type Message = { role: string; content: unknown };

/** `{mode}_step_{step}_epoch_{epoch}`, from `EpisodeLogger.get_step_dir`. */
const STEP_DIR = /^([A-Za-z]+)_step_(\d+)_epoch_(\d+)$/;
const LAYOUT = /(^|[\\/])(train|val)_step_\d+_epoch_\d+[\\/][^\\/]+\.json$/;
const DEFAULT_TRAJ_NAME = 'default_traj_name';
const TASK_ID_KEYS = ['instance_id', 'task_id', 'id', 'uid', 'idx'] as const;
const SHELL_TOOLS = new Set(['execute_bash', 'bash', 'shell', 'run_shell', 'run_shell_command', 'terminal', 'execute_command', 'run_command']);
const EDITOR_TOOLS = new Set(['file_editor', 'str_replace_editor', 'edit_file', 'str_replace_based_edit_tool']);
const SUBMIT_TOOLS = new Set(['finish', 'submit', 'final_answer']);
const TIMEOUT = /\btimed out\b|was cancelled because it took more than \d+ seconds|took too long to execute/i;
const CLIPPED = /<response clipped>|characters were elided/;

export const rllmImporter: Importer = {
  format: 'rllm',
  description: "rLLM EpisodeLogger dumps: episodes/{train|val}_step_N_epoch_E/*.json, one Episode per file (one rollout per trajectory)",
  followable: false,
  matches(file: string, head: string): boolean {
    if (path.basename(file) === 'batch_summary.json' || !file.endsWith('.json')) return false;
    if (LAYOUT.test(file)) return true;
    // Outside the usual layout: EpisodeLogger writes these two keys first.
    return head.includes('"training_step"') && head.includes('"episode_id"');
  },
  read(file: string, opts: ReadOptions): AsyncIterable<ImporterItem> {
    return readEpisode(file, opts);
  },
};

async function* readEpisode(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
  let text: string;
  try {
    text = (opts.content ?? readWhole(file)).toString('utf8');
  } catch (err) {
    throw new ImportError(file, null, `cannot read rLLM episode file: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    // Python's json.dumps writes a NaN reward or metric as a bare NaN token.
    const py = parsePythonJson(text);
    if (!py) {
      yield bad(file, lineOfError(text, err as Error), `not valid JSON (${(err as Error).message})`, clip(text));
      return;
    }
    data = py.value;
  }
  if (!isObj(data)) {
    yield bad(file, 1, 'rLLM episode: the file holds no JSON object', clip(text));
    return;
  }
  // The batch summary that log_episodes_batch writes beside the episodes.
  if (!('trajectories' in data) && 'episode_files' in data && 'summary_stats' in data) return;

  const problem = validate(data);
  if (problem) {
    yield bad(file, 1, `rLLM episode: ${problem}`, clip(text));
    return;
  }

  const where = stepDir(file);
  const step = where?.step ?? num(data.training_step) ?? 0;
  const epoch = where?.epoch ?? num(data.epoch) ?? null;
  const split: Split = where?.split ?? opts.split ?? 'train';

  const episodeId = str(data.episode_id) ?? str(data.id) ?? '';
  const taskId = taskIdOf(episodeId);
  const task = data.task;
  const promptId = taskOwnId(task) ?? str(data.task_hash) ?? pythonTaskHash(task);
  const correct = typeof data.is_correct === 'boolean' ? data.is_correct : null;
  const stopReason = str(data.termination_reason);
  const episodeTiming = isObj(data.timing) ? data.timing : isObj(data.info) && isObj(data.info.timing) ? data.info.timing : null;
  const errors = episodeErrors(data);

  const trajectories = data.trajectories as Obj[];
  for (let t = 0; t < trajectories.length; t++) {
    const traj = trajectories[t]!;
    const rawSteps = traj.steps as Obj[];
    const name = str(traj.name) || DEFAULT_TRAJ_NAME;
    const groupName = name === DEFAULT_TRAJ_NAME ? `${DEFAULT_TRAJ_NAME}_${t}` : name;
    const chat = lastChat(rawSteps);
    const steps = toSteps(rawSteps, stopReason);
    const tokens = steps.filter((s) => s.role === 'assistant').map((s) => s.tokens);
    const trajTiming = isObj(traj.timing) ? traj.timing : isObj(traj.info) && isObj(traj.info.timing) ? traj.info.timing : null;
    const seconds = num(trajTiming?.total_time) ?? num(episodeTiming?.total_time);

    const record: RolloutRecord = {
      step,
      split,
      promptId,
      groupId: `${taskId}:${groupName}`,
      prompt: promptOf(chat, rawSteps, task),
      response: responseOf(chat, rawSteps),
      groundTruth: groundTruthOf(task),
      reward: num(traj.reward) ?? num(rawSteps[rawSteps.length - 1]?.reward) ?? null,
      correct,
      extractedAnswer: null,
      advantage: null,
      stopReason,
      responseTokens: tokens.length && tokens.every((n) => n !== null) ? tokens.reduce<number>((a, n) => a + (n ?? 0), 0) : null,
      numTurns: rawSteps.length,
      errors,
      timingMs: seconds === null ? null : Math.round(seconds * 1000),
      dataSource: isObj(task) ? str(task.data_source) : null,
      extra: {
        episode_id: episodeId,
        trajectory_name: name,
        trajectory_uid: str(traj.uid),
        epoch,
        metrics: isObj(data.metrics) ? data.metrics : {},
      },
      steps,
    };
    yield { record, at: { file, record: t + 1 } };
  }
}

/** The first required field a file lacks, or null when it is an episode we can read. */
function validate(data: Obj): string | null {
  if (!('episode_id' in data) && !('id' in data)) return 'missing field "episode_id"';
  if (!('trajectories' in data)) return 'missing field "trajectories"';
  if (!Array.isArray(data.trajectories)) return 'field "trajectories" is not a list';
  for (const [i, traj] of data.trajectories.entries()) {
    if (!isObj(traj)) return `trajectories[${i}] is not an object`;
    if (!('steps' in traj)) return `trajectories[${i}] missing field "steps"`;
    if (!Array.isArray(traj.steps)) return `trajectories[${i}].steps is not a list`;
    const at = traj.steps.findIndex((s) => !isObj(s));
    if (at !== -1) return `trajectories[${i}].steps[${at}] is not an object`;
  }
  return null;
}

function stepDir(file: string): { split: Split | undefined; step: number; epoch: number } | null {
  const m = STEP_DIR.exec(path.basename(path.dirname(file)));
  if (!m) return null;
  const mode = m[1]!.toLowerCase();
  const split: Split | undefined = mode === 'train' ? 'train' : mode === 'val' || mode === 'validation' || mode === 'test' ? 'val' : undefined;
  return { split, step: Number(m[2]), epoch: Number(m[3]) };
}

/** rLLM's episode id is `{task_id}:{rollout_idx}`; a task id may itself contain colons. */
function taskIdOf(episodeId: string): string {
  const m = /^(.*):\d+$/.exec(episodeId);
  return m ? m[1]! : episodeId;
}

function taskOwnId(task: unknown): string | null {
  if (!isObj(task)) return null;
  for (const key of TASK_ID_KEYS) {
    const v = task[key];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return null;
}

/**
 * The hash EpisodeLogger.compute_task_hash would give: sha256 of
 * `json.dumps(task, sort_keys=True)`, first 8 hex digits. Used when the file has no
 * `task_hash`. (A float written as `1.0` reads back as 1 here and hashes differently.)
 */
export function pythonTaskHash(task: unknown): string {
  return createHash('sha256').update(pythonJson(task), 'utf8').digest('hex').slice(0, 8);
}

function pythonJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : v > 0 ? 'Infinity' : v < 0 ? '-Infinity' : 'NaN';
  if (typeof v === 'string') return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(v)) return `[${v.map(pythonJson).join(', ')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v as Obj).sort();
    return `{${keys.map((k) => `${pythonJson(k)}: ${pythonJson((v as Obj)[k])}`).join(', ')}}`;
  }
  return pythonJson(String(v));
}

function groundTruthOf(task: unknown): string | null {
  if (!isObj(task)) return null;
  const v = task.ground_truth ?? task.answer;
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function episodeErrors(data: Obj): string[] {
  const info = isObj(data.info) ? data.info : null;
  const error = info && isObj(info.error) ? info.error : null;
  const message = error ? str(error.error_message) : null;
  return message ? [message] : [];
}

/** The fullest chat of the trajectory: rLLM agents store the cumulative chat on every step. */
function lastChat(steps: Obj[]): Message[] | null {
  for (let i = steps.length - 1; i >= 0; i--) {
    const chat = steps[i]!.chat_completions;
    if (Array.isArray(chat) && chat.length) return chat.filter(isObj).map((m) => ({ role: str(m.role) ?? 'user', content: m.content ?? null }));
  }
  return null;
}

function promptOf(chat: Message[] | null, steps: Obj[], task: unknown): RolloutRecord['prompt'] {
  if (chat) {
    const first = chat.findIndex((m) => m.role === 'assistant');
    const prompt = first === -1 ? chat : chat.slice(0, first);
    if (prompt.length) return prompt;
  }
  const obs = steps[0]?.observation;
  if (obs !== undefined && obs !== null && obs !== '') return asText(obs);
  if (isObj(task)) {
    for (const key of ['question', 'problem', 'problem_statement', 'prompt']) {
      const v = task[key];
      if (typeof v === 'string') return v;
    }
  }
  return task === undefined || task === null ? '' : asText(task);
}

/** A one-step trajectory's response is the model's text; a longer one's, its turns after the prompt. */
function responseOf(chat: Message[] | null, steps: Obj[]): RolloutRecord['response'] {
  const first = chat ? chat.findIndex((m) => m.role === 'assistant') : -1;
  if (steps.length === 1) {
    const only = str(steps[0]!.model_response);
    if (only) return only;
    return chat && first !== -1 ? asText(chat[first]!.content) : '';
  }
  if (chat && first !== -1) return chat.slice(first);
  const turns: Message[] = [];
  steps.forEach((s, i) => {
    if (i > 0 && s.observation !== undefined && s.observation !== null && s.observation !== '') turns.push({ role: 'user', content: asText(s.observation) });
    turns.push({ role: 'assistant', content: str(s.model_response) ?? '' });
  });
  return turns;
}

/**
 * Each rLLM step is one model call: `observation` is what the model saw before it
 * (the task prompt at step 0, the environment's answer to the previous action after),
 * then the model's `action`. So a step gives an observation step (the prompt as a 'user'
 * message at step 0, a 'tool' observation after; skipped when empty) followed by an
 * assistant step: assistant steps = trajectory steps = numTurns.
 */
function toSteps(steps: Obj[], stopReason: string | null): StepRecord[] {
  const out: StepRecord[] = [];
  steps.forEach((s, i) => {
    const obs = s.observation;
    if (obs !== undefined && obs !== null && obs !== '') {
      const text = asText(obs);
      out.push({
        role: i === 0 ? 'user' : 'tool',
        actionKind: i === 0 ? 'message' : 'observation',
        command: null,
        exitCode: null,
        observationBytes: Buffer.byteLength(text, 'utf8'),
        formatError: false,
        timeout: i > 0 && TIMEOUT.test(text),
        truncated: CLIPPED.test(text),
        tokens: null,
      });
    }
    const action = parseAction(s.action, str(s.model_response) ?? '');
    const ids = s.response_ids;
    out.push({
      role: 'assistant',
      actionKind: action.kind,
      command: action.command,
      exitCode: null,
      observationBytes: null,
      formatError: action.formatError,
      timeout: false,
      truncated: i === steps.length - 1 && stopReason === 'max_response_length_exceeded',
      tokens: Array.isArray(ids) && ids.length ? ids.length : null,
    });
  });
  return out;
}

interface ParsedAction {
  kind: ActionKind;
  command: string | null;
  formatError: boolean;
}

/**
 * What the model did at a step. rLLM's `action` is whatever the agent's parser made of
 * the response: an r2e-gym function-call block for the SWE agent
 * (`<function=execute_bash><parameter=command>…</parameter></function>`), a list of
 * OpenAI tool calls for the tool agent, the answer text for math agents.
 */
function parseAction(action: unknown, modelResponse: string): ParsedAction {
  if (Array.isArray(action)) {
    const call = action.find(isObj);
    if (!call) return { kind: 'other', command: null, formatError: action.length > 0 };
    const fn = isObj(call.function) ? call.function : call;
    const name = str(fn.name) ?? '';
    const args = typeof fn.arguments === 'string' ? safeParse(fn.arguments) : fn.arguments;
    return toolAction(name, isObj(args) ? args : {});
  }
  if (isObj(action)) {
    const name = str(action.name) ?? str(action.function_name);
    if (name !== null) return toolAction(name, isObj(action.parameters) ? action.parameters : isObj(action.arguments) ? action.arguments : {});
    const command = str(action.command);
    return command ? { kind: classifyCommand(command), command, formatError: false } : { kind: 'other', command: null, formatError: false };
  }
  const text = typeof action === 'string' ? action : action === null || action === undefined ? '' : String(action);
  const block = /<function=([^>]*)>([\s\S]*?)<\/function>/.exec(text);
  if (block) {
    const params: Obj = {};
    for (const m of block[2]!.matchAll(/<parameter=([^>]+)>([\s\S]*?)<\/parameter>/g)) params[m[1]!.trim()] = m[2]!.trim();
    return toolAction(block[1]!.trim(), params);
  }
  const bash = extractBashBlock(text);
  if (bash.command) return { kind: classifyCommand(bash.command), command: bash.command, formatError: false };
  if (text.trim()) return { kind: 'message', command: null, formatError: false };
  // No action parsed from a non-empty response: the agent's parser failed on it.
  return { kind: 'other', command: null, formatError: modelResponse.trim() !== '' && /<function=/.test(modelResponse) };
}

function toolAction(name: string, params: Obj): ParsedAction {
  if (name === '') return { kind: 'other', command: null, formatError: true };
  const lower = name.toLowerCase();
  if (SUBMIT_TOOLS.has(lower)) return { kind: 'submit', command: name, formatError: false };
  if (SHELL_TOOLS.has(lower)) {
    const command = str(params.command) ?? str(params.cmd);
    if (!command) return { kind: 'other', command: null, formatError: true };
    return { kind: classifyCommand(command), command, formatError: false };
  }
  if (EDITOR_TOOLS.has(lower)) {
    const sub = str(params.command) ?? '';
    const command = [name, sub, str(params.path) ?? ''].filter(Boolean).join(' ');
    return { kind: sub === 'view' ? 'search' : 'edit', command, formatError: false };
  }
  if (lower === 'search') {
    const command = ['search', str(params.search_term) ?? '', str(params.path) ?? ''].filter(Boolean).join(' ');
    return { kind: 'search', command, formatError: false };
  }
  const command = [name, ...Object.values(params).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))].join(' ');
  return { kind: 'command', command, formatError: false };
}

function clip(raw: string): string {
  return raw.length > 65536 ? raw.slice(0, 65536) : raw;
}

/** 1-based line of a JSON.parse error's position, or 1 when it names none. */
function lineOfError(text: string, err: Error): number {
  const m = /at position (\d+)/.exec(err.message);
  if (!m) return 1;
  const upTo = text.slice(0, Number(m[1]));
  return upTo.split('\n').length;
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

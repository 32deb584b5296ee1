/**
 * SWE-agent trajectories (`<instance_id>.traj`, one JSON document per instance), as
 * SWE-agent's agent writes them (SWE-agent/SWE-agent, sweagent/agent/agents.py):
 *
 * - 0.x: `Agent.save_trajectory` writes `{environment, trajectory, history, info}`;
 *   trajectory entries are `{action, observation, response, state, thought}` (state a JSON
 *   string), info holds `exit_status`, `submission` and `model_stats`.
 * - 1.x: `DefaultAgent.get_trajectory_data` writes `{trajectory, history, info,
 *   replay_config, environment}`; entries add `execution_time`, `query`, `extra_info`
 *   (state becomes an object, `reasoning_content` may appear), and format-error requeries
 *   are kept in the trajectory with an empty action. A RetryAgent file adds `attempts`
 *   and merges the chosen attempt's fields in at top level, which is what we read.
 *
 * One RolloutRecord per file; per trajectory entry an assistant step (the action) and a
 * tool step (its observation), so assistant steps = entries = numTurns. A .traj carries
 * no verdict: `correct` is null unless a SWE-bench report or run summary names the
 * instance (see sweVerdicts.ts).
 */
import { readWhole } from '../compressed';
import path from 'node:path';
import { ImportError, type ImporterItem, type RolloutRecord, type StepRecord } from '../rows';
import { classifyCommand, type ActionKind } from './actions';
import { parsePythonJson } from './pythonJson';
import { findVerdict, isPatch, verdictFields, type Verdict } from './sweVerdicts';
import type { Importer, ReadOptions } from './types';
import { bad, isRecord, posix } from './util';

type Obj = Record<string, unknown>;
type Message = { role: string; content: unknown };

/**
 * Observations that say the command was killed for time: 0.x's swe_env appends
 * "EXECUTION TIMED OUT" (and "... TIMED OUT BECAUSE NO OUTPUT WAS PRODUCED ..."),
 * 1.x renders command_cancelled_timeout_template ("The command '…' was cancelled because
 * it took more than N seconds").
 */
const TIMEOUT = /EXECUTION TIMED OUT|was cancelled because it took more than \d+ seconds|\btimed out\b/i;
/** 1.x's next_step_truncated_observation_template; the ACI's own "<response clipped>". */
const CLIPPED = /<response clipped>|characters were elided/;
/** 0.x's exit pseudo-actions: the run ended without the model choosing a command. */
const EXIT_ACTIONS = new Set(['exit_context', 'exit_cost', 'exit_error', 'exit_format', 'exit_api', 'skip']);
/** SWE-agent's own ACI commands, which generic shell classification does not know. */
const ACI_EDIT = new Set(['edit', 'create', 'insert', 'append']);
const ACI_NAVIGATE = new Set(['goto', 'scroll_up', 'scroll_down']);

export const sweAgentImporter: Importer = {
  format: 'swe-agent',
  description: 'SWE-agent trajectories (<instance_id>.traj): action/observation steps, exit status and submission',
  domainOf: () => 'swe',
  followable: false,
  offThread: true,
  matches(file: string, head: string): boolean {
    // `.traj.json` is mini-swe-agent's, handled by its own importer.
    return /\.traj$/.test(posix(file)) && head.includes('"trajectory"');
  },
  read(file: string, opts: ReadOptions): AsyncIterable<ImporterItem> {
    return readTraj(file, opts);
  },
};

async function* readTraj(file: string, opts: ReadOptions): AsyncGenerator<ImporterItem> {
  let text: string;
  try {
    text = (opts.content ?? readWhole(file)).toString('utf8');
  } catch (err) {
    throw new ImportError(file, null, `cannot read SWE-agent trajectory: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const py = parsePythonJson(text);
    if (!py) {
      yield bad(file, lineOfError(text, err as Error), `not valid JSON (${(err as Error).message})`, clip(text));
      return;
    }
    doc = py.value;
  }
  const problem = validate(doc);
  if (problem) {
    yield bad(file, 1, `SWE-agent trajectory: ${problem}`, clip(text));
    return;
  }
  const data = doc as Obj;
  const entries = data.trajectory as Obj[];
  const info = isRecord(data.info) ? data.info : {};
  const history = Array.isArray(data.history) ? data.history.filter(isRecord) : [];
  const instanceId = path.posix.basename(posix(file)).replace(/\.traj$/, '');

  let verdict: Verdict | null;
  try {
    verdict = findVerdict(file, instanceId, opts.verdicts);
  } catch (err) {
    yield bad(file, 1, `its SWE-bench verdicts could not be read (${(err as Error).message})`);
    return;
  }

  const steps: StepRecord[] = [];
  for (const e of entries) {
    const action = typeof e.action === 'string' ? e.action : '';
    const observation = typeof e.observation === 'string' ? e.observation : null;
    const formatError = action.trim() === '' || action.trim() === 'exit_format';
    steps.push({
      role: 'assistant',
      actionKind: formatError ? 'other' : actionKind(action),
      command: action.trim() === '' ? null : action.trim(),
      exitCode: exitCodeOf(e),
      observationBytes: null,
      formatError,
      timeout: false,
      truncated: false,
      tokens: null,
    });
    steps.push({
      role: 'tool',
      actionKind: 'observation',
      command: null,
      exitCode: null,
      observationBytes: observation === null ? null : Buffer.byteLength(observation, 'utf8'),
      formatError: false,
      timeout: observation !== null && TIMEOUT.test(observation),
      truncated: observation !== null && CLIPPED.test(observation),
      tokens: null,
    });
  }

  const submission = info.submission;
  const stats = isRecord(info.model_stats) ? info.model_stats : null;
  const extra: Obj = { instance_id: instanceId };
  if (typeof data.environment === 'string') extra.environment = data.environment;
  if (stats) extra.model_stats = stats;
  if (typeof info.swe_agent_version === 'string') extra.swe_agent_version = info.swe_agent_version;
  if (Array.isArray(data.attempts)) extra.attempts = data.attempts.length;
  if (verdict) {
    extra.report = verdict.file;
    extra.verdict = verdict.status;
    extra.patch_applied = verdict.applied;
  }
  extra.patch_submitted = isPatch(submission);

  const record: RolloutRecord = {
    step: 0,
    split: opts.split ?? 'val',
    promptId: instanceId,
    prompt: promptOf(history, entries),
    response:
      typeof submission === 'string' && submission !== ''
        ? submission
        : isRecord(submission)
          ? JSON.stringify(submission)
          : entries.flatMap((e): Message[] => [
              { role: 'assistant', content: typeof e.response === 'string' ? e.response : '' },
              { role: 'tool', content: typeof e.observation === 'string' ? e.observation : '' },
            ]),
    groundTruth: null,
    ...verdictFields(verdict),
    extractedAnswer: null,
    advantage: null,
    stopReason: typeof info.exit_status === 'string' ? info.exit_status : null,
    responseTokens: tokensReceived(stats, entries.length),
    numTurns: entries.length,
    timingMs: null,
    dataSource: null,
    envClass: 'swe-agent',
    extra,
    steps,
  };
  yield { record, at: { file, record: 1 } };
}

/**
 * `model_stats.tokens_received`, where the run counted it. Demonstrations and replays
 * (SWE-agent's `trajectories/demonstrations`) carry `tokens_received: 0` over a whole
 * trajectory of model turns: nothing was counted, which is not a response of 0 tokens.
 */
function tokensReceived(stats: Obj | null, turns: number): number | null {
  const n = stats?.tokens_received;
  if (typeof n !== 'number' || !Number.isFinite(n)) return null;
  return n === 0 && turns > 0 ? null : n;
}

function validate(doc: unknown): string | null {
  if (!isRecord(doc)) return 'the file holds no JSON object';
  if (!('trajectory' in doc)) return 'missing field "trajectory"';
  if (!Array.isArray(doc.trajectory)) return 'field "trajectory" is not a list';
  const at = doc.trajectory.findIndex((e) => !isRecord(e));
  if (at !== -1) return `trajectory[${at}] is not an object`;
  const noAction = doc.trajectory.findIndex((e) => !('action' in (e as Obj)));
  if (noAction !== -1) return `trajectory[${noAction}] missing field "action"`;
  return null;
}

/**
 * What a SWE-agent action does. Its ACI adds commands a shell classifier cannot know:
 * `edit N:M … end_of_edit`, `create`, `insert` change files; `goto` / `scroll_*` read;
 * 1.x's `str_replace_editor view` reads and its other subcommands write. The rest
 * (`search_dir`, `open`, `python -m pytest`, `submit`, plain shell) is classifyCommand's.
 */
export function actionKind(action: string): ActionKind {
  const trimmed = action.trim();
  if (EXIT_ACTIONS.has(trimmed)) return 'other';
  const words = (trimmed.split('\n')[0] ?? '').trim().split(/\s+/);
  const first = words[0] ?? '';
  if (ACI_EDIT.has(first)) return 'edit';
  if (ACI_NAVIGATE.has(first)) return 'search';
  if (first === 'str_replace_editor') return words[1] === 'view' ? 'search' : 'edit';
  return classifyCommand(trimmed);
}

/** The prompt the model saw first: the history up to its first answer, demonstrations left out. */
function promptOf(history: Obj[], entries: Obj[]): RolloutRecord['prompt'] {
  const fromMessages = (messages: Obj[]): Message[] => {
    const first = messages.findIndex((m) => m.role === 'assistant');
    return (first === -1 ? messages : messages.slice(0, first))
      .filter((m) => m.is_demo !== true)
      .map((m) => ({ role: typeof m.role === 'string' ? m.role : 'user', content: m.content ?? null }));
  };
  const prompt = fromMessages(history);
  if (prompt.length) return prompt;
  // 1.x keeps the exact messages of each model call in `query`.
  const query = entries[0]?.query;
  if (Array.isArray(query)) {
    const fromQuery = fromMessages(query.filter(isRecord));
    if (fromQuery.length) return fromQuery;
  }
  return '';
}

function exitCodeOf(e: Obj): number | null {
  for (const v of [e.exit_code, e.returncode, isRecord(e.state) ? e.state.exit_code : undefined]) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
  }
  return null;
}

function clip(raw: string): string {
  return raw.length > 65536 ? raw.slice(0, 65536) : raw;
}

/** 1-based line of a JSON.parse error's position, or 1 when it names none. */
function lineOfError(text: string, err: Error): number {
  const m = /at position (\d+)/.exec(err.message);
  return m ? text.slice(0, Number(m[1])).split('\n').length : 1;
}

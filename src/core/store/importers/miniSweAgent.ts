import { readWhole } from '../compressed';
import path from 'node:path';
import type { RolloutRecord, StepRecord } from '../rows';
import { classifyCommand, extractBashBlock } from './actions';
import { contentText, shellCommand, toolCalls } from './messages';
import { findVerdict, isPatch, verdictFields, type Verdict } from './sweVerdicts';
import type { Importer } from './types';
import { bad, isRecord, posix } from './util';

/** 1.x's format-error feedback; 2.x marks it with `extra.interrupt_type: "FormatError"`. */
const FORMAT_ERROR = /^(Please always provide EXACTLY ONE action in triple backticks|Tool call error:)/;
/** 1.x's timeout feedback; 2.x renders the exception (`Command '…' timed out after N seconds`) in `<exception>`. */
const TIMEOUT = /^The last command <command>[\s\S]*?<\/command> timed out|<exception>[^<]*(timed out|TimeoutExpired)/;
const TRUNCATED = /<warning>\s*The output of your last command was too long/;

type Message = { role: string; content: unknown; extra?: unknown } & Record<string, unknown>;

function extraOf(m: Message | undefined): Record<string, unknown> {
  return m && isRecord(m.extra) ? m.extra : {};
}

function isFormatError(m: Message | undefined): boolean {
  return m !== undefined && m.role === 'user' && (extraOf(m).interrupt_type === 'FormatError' || FORMAT_ERROR.test(contentText(m.content)));
}

/**
 * The commands of an assistant message: 2.x keeps the parsed ones in `extra.actions`
 * (tool calling and text mode alike); else its `tool_calls`; else 1.x's one fenced bash
 * block (none, or several, is a format error).
 */
function actionsOf(m: Message): string[] {
  const parsed = extraOf(m).actions;
  if (Array.isArray(parsed)) return parsed.filter(isRecord).map((a) => (typeof a.command === 'string' ? a.command : '')).filter(Boolean);
  const calls = toolCalls(m);
  if (calls.length) return calls.map((c) => shellCommand(c.name, c.args) ?? (isRecord(c.args) && typeof c.args.command === 'string' ? c.args.command : '')).filter(Boolean);
  const { command, count } = extractBashBlock(contentText(m.content));
  return count === 1 ? [command ?? ''] : [];
}

/**
 * mini-swe-agent trajectories (`<instance_id>.traj.json`):
 *
 * - 1.x (trajectory_format "mini-swe-agent-1"): a system and a task message, then
 *   assistant turns holding one fenced bash command each, answered by user observations
 *   (`<returncode>N</returncode><output>…`) or by harness feedback (format errors, timeouts).
 * - 2.x (trajectory_format "mini-swe-agent-1.1", SWE-agent/mini-swe-agent
 *   src/minisweagent/models/utils/actions_toolcall.py): assistant turns carry OpenAI
 *   `tool_calls` and the parsed commands in `extra.actions`; each command's observation is
 *   a `tool` message (`<exception>…</exception>` first when the command raised, e.g. timed
 *   out); a response without a tool call is dropped and answered by a user message marked
 *   `extra.interrupt_type: "FormatError"`; the run ends with an `exit` message.
 *
 * Steps: the prompt messages, one assistant step per command (a turn without one is a
 * format error; a dropped turn gets an assistant step of its own), one step per
 * observation. The SWE-bench verdict comes from a report or run summary (sweVerdicts.ts).
 */
export const miniSweAgentImporter: Importer = {
  format: 'mini-swe-agent',
  description: 'mini-swe-agent 1.x and 2.x trajectories (<instance_id>.traj.json) with SWE-bench verdicts',
  domainOf: () => 'swe',
  followable: false,
  offThread: true,
  matches(file, head) {
    // Keys come in any order and `info` (config, submission) can fill the first bytes.
    return /\.traj\.json$/.test(posix(file)) && /^\s*\{/.test(head) && /"(messages|trajectory_format|info|instance_id)"\s*:/.test(head);
  },
  async *read(file, opts) {
    let doc: unknown;
    try {
      doc = JSON.parse((opts.content ?? readWhole(file)).toString('utf8'));
    } catch (err) {
      yield bad(file, 1, `not a valid JSON document (${(err as Error).message})`);
      return;
    }
    if (!isRecord(doc) || !Array.isArray(doc.messages)) {
      yield bad(file, 1, 'expected an object with a "messages" array (mini-swe-agent trajectory)');
      return;
    }
    const messages = doc.messages as unknown[];
    const malformed = messages.findIndex((m) => !isRecord(m) || typeof m.role !== 'string' || !(typeof m.content === 'string' || m.content === null || Array.isArray(m.content)));
    if (malformed !== -1) {
      yield bad(file, 1, `messages[${malformed}] must have a string "role" and a "content" (text, null or a list of parts)`);
      return;
    }
    const msgs = messages as Message[];
    const info = isRecord(doc.info) ? doc.info : {};
    const instanceId = typeof doc.instance_id === 'string' ? doc.instance_id : path.posix.basename(posix(file)).replace(/\.traj\.json$/, '');
    const promptEnd = Math.min(2, msgs.length);
    const steps: StepRecord[] = [];
    const base = { command: null, exitCode: null, observationBytes: null, formatError: false, timeout: false, truncated: false, tokens: null };
    let completionTokens = 0;
    let sawTokens = false;
    let modelTurns = 0;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      const text = contentText(m.content);
      if (i < promptEnd) {
        const bytes = Buffer.byteLength(text, 'utf8');
        steps.push({ ...base, role: m.role === 'system' ? 'system' : 'user', actionKind: 'message', observationBytes: bytes });
      } else if (m.role === 'assistant') {
        modelTurns++;
        const extra = extraOf(m);
        const usage = isRecord(extra.response) && isRecord(extra.response.usage) ? extra.response.usage : null;
        const tokens = usage && typeof usage.completion_tokens === 'number' ? usage.completion_tokens : null;
        if (tokens !== null) {
          completionTokens += tokens;
          sawTokens = true;
        }
        const commands = actionsOf(m);
        // The harness can reject what looked like one command (1.x wants a ```bash block).
        const rejected = isFormatError(msgs[i + 1]);
        if (!commands.length) steps.push({ ...base, role: 'assistant', actionKind: 'other', formatError: true, tokens });
        commands.forEach((command, k) => steps.push({ ...base, role: 'assistant', actionKind: classifyCommand(command), command, formatError: rejected, tokens: k === 0 ? tokens : null }));
      } else if (m.role === 'exit') {
        steps.push({ ...base, role: 'system', actionKind: 'other', observationBytes: Buffer.byteLength(text, 'utf8') });
      } else {
        const formatError = isFormatError(m);
        // 2.x drops a response with no tool call: the rejected turn still happened.
        if (formatError && msgs[i - 1]?.role !== 'assistant') {
          modelTurns++;
          steps.push({ ...base, role: 'assistant', actionKind: 'other', formatError: true });
        }
        const extra = extraOf(m);
        const rc = typeof extra.returncode === 'number' ? extra.returncode : Number(/<returncode>(-?\d+)<\/returncode>/.exec(text)?.[1] ?? NaN);
        const exception = typeof extra.exception_info === 'string' ? extra.exception_info : '';
        steps.push({
          ...base,
          role: m.role === 'tool' ? 'tool' : 'user',
          actionKind: 'observation',
          exitCode: Number.isInteger(rc) ? rc : null,
          observationBytes: Buffer.byteLength(text, 'utf8'),
          formatError,
          // The pattern only where it can match: it would scan every long output character by character.
          timeout: ((text.startsWith('The last command <command>') || text.includes('<exception>')) && TIMEOUT.test(text)) || /timed out|TimeoutExpired/i.test(exception),
          truncated: text.includes('<warning>') && TRUNCATED.test(text),
        });
      }
    }
    let verdict: Verdict | null = null;
    try {
      verdict = findVerdict(file, instanceId, opts.verdicts);
    } catch (err) {
      yield bad(file, 1, `its SWE-bench verdicts could not be read (${(err as Error).message})`);
      return;
    }
    const modelStats = isRecord(info.model_stats) ? info.model_stats : {};
    const submission = typeof info.submission === 'string' ? info.submission : null;
    const record: RolloutRecord = {
      step: 0,
      split: opts.split ?? 'val',
      promptId: instanceId,
      prompt: msgs.slice(0, promptEnd).map((m) => ({ role: m.role, content: m.content })),
      response: msgs.slice(promptEnd).map((m) => ({ role: m.role, content: m.content })),
      groundTruth: null,
      ...verdictFields(verdict),
      extractedAnswer: submission,
      stopReason: typeof info.exit_status === 'string' ? info.exit_status : null,
      responseTokens: sawTokens ? completionTokens : null,
      numTurns: modelTurns,
      dataSource: 'swe-bench',
      envClass: 'mini-swe-agent',
      extra: {
        instance_id: instanceId,
        trajectory_format: typeof doc.trajectory_format === 'string' ? doc.trajectory_format : null,
        verdict: verdict?.status ?? null,
        ...(verdict ? { verdict_file: verdict.file } : {}),
        patch_applied: verdict?.applied ?? null,
        tests: verdict?.tests ?? null,
        patch_submitted: isPatch(submission),
        instance_cost: typeof modelStats.instance_cost === 'number' ? modelStats.instance_cost : null,
        api_calls: typeof modelStats.api_calls === 'number' ? modelStats.api_calls : null,
        mini_version: typeof info.mini_version === 'string' ? info.mini_version : null,
      },
      steps,
    };
    yield { record, at: { file, record: 1 } };
  },
};

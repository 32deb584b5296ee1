import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { RolloutRecord, StepRecord } from '../rows';
import { classifyCommand, extractBashBlock } from './actions';
import type { Importer } from './types';
import { bad, isRecord, posix } from './util';

const FORMAT_ERROR = /^Please always provide EXACTLY ONE action in triple backticks/;
const TIMEOUT = /^The last command <command>[\s\S]*?<\/command> timed out/;
const TRUNCATED = /<warning>\s*The output of your last command was too long/;

interface Verdict {
  resolved: boolean;
  applied: boolean | null;
  tests: Record<string, number>;
}

/** SWE-bench's report.json: top-level fields, or keyed by instance id. */
function readVerdict(trajFile: string, instanceId: string): Verdict | null {
  const dir = path.dirname(trajFile);
  const candidates = [
    path.join(dir, '..', 'reports', `${instanceId}.report.json`),
    path.join(dir, `${instanceId}.report.json`),
    path.join(dir, instanceId, 'report.json'),
  ];
  const file = candidates.find((f) => existsSync(f));
  if (!file) return null;
  let report: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (isRecord(report) && isRecord(report[instanceId])) report = report[instanceId];
  if (!isRecord(report) || typeof report.resolved !== 'boolean') return null;
  const tests: Record<string, number> = {};
  const ts = report.tests_status;
  if (isRecord(ts)) {
    for (const [kind, key] of [['FAIL_TO_PASS', 'f2p'], ['PASS_TO_PASS', 'p2p']] as const) {
      const t = ts[kind];
      if (isRecord(t)) {
        tests[`${key}_success`] = Array.isArray(t.success) ? t.success.length : 0;
        tests[`${key}_failure`] = Array.isArray(t.failure) ? t.failure.length : 0;
      }
    }
  }
  return { resolved: report.resolved, applied: typeof report.patch_successfully_applied === 'boolean' ? report.patch_successfully_applied : null, tests };
}

/**
 * mini-swe-agent trajectories (`<instance_id>.traj.json`, trajectory_format
 * "mini-swe-agent-1"): a system and a task message, then assistant turns holding one
 * fenced bash command each, answered by observations (`<returncode>N</returncode>
 * <output>…`) or by harness feedback (format errors, timeouts). The SWE-bench verdict
 * comes from the sibling `reports/<instance_id>.report.json` when it exists.
 * One step row per message, so step counts equal message counts.
 */
export const miniSweAgentImporter: Importer = {
  format: 'mini-swe-agent',
  description: 'mini-swe-agent trajectories (<instance_id>.traj.json) with SWE-bench report.json verdicts',
  followable: false,
  matches(file, head) {
    // Keys come in any order and `info` (config, submission) can fill the first bytes.
    return /\.traj\.json$/.test(posix(file)) && /^\s*\{/.test(head) && /"(messages|trajectory_format|info|instance_id)"\s*:/.test(head);
  },
  async *read(file, opts) {
    let doc: unknown;
    try {
      doc = JSON.parse(opts.content ? opts.content.toString('utf8') : await readFile(file, 'utf8'));
    } catch (err) {
      yield bad(file, 1, `not a valid JSON document (${(err as Error).message})`);
      return;
    }
    if (!isRecord(doc) || !Array.isArray(doc.messages)) {
      yield bad(file, 1, 'expected an object with a "messages" array (mini-swe-agent trajectory)');
      return;
    }
    const messages = doc.messages as unknown[];
    const malformed = messages.findIndex((m) => !isRecord(m) || typeof m.role !== 'string' || typeof m.content !== 'string');
    if (malformed !== -1) {
      yield bad(file, 1, `messages[${malformed}] must have a string "role" and "content"`);
      return;
    }
    const msgs = messages as { role: string; content: string; extra?: unknown }[];
    const info = isRecord(doc.info) ? doc.info : {};
    const instanceId = typeof doc.instance_id === 'string' ? doc.instance_id : path.basename(file).replace(/\.traj\.json$/, '');
    const promptEnd = Math.min(2, msgs.length);
    const steps: StepRecord[] = [];
    let completionTokens = 0;
    let sawTokens = false;
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      const bytes = Buffer.byteLength(m.content, 'utf8');
      if (i < promptEnd) {
        steps.push({ role: m.role === 'system' ? 'system' : 'user', actionKind: 'message', command: null, exitCode: null, observationBytes: bytes, formatError: false, timeout: false, truncated: false, tokens: null });
      } else if (m.role === 'assistant') {
        const { command, count } = extractBashBlock(m.content);
        const next = msgs[i + 1];
        const usage = isRecord(m.extra) && isRecord(m.extra.response) && isRecord(m.extra.response.usage) ? m.extra.response.usage : null;
        const tokens = usage && typeof usage.completion_tokens === 'number' ? usage.completion_tokens : null;
        if (tokens !== null) {
          completionTokens += tokens;
          sawTokens = true;
        }
        steps.push({
          role: 'assistant',
          actionKind: count === 1 ? classifyCommand(command) : 'other',
          command: count === 1 ? command : null,
          exitCode: null,
          observationBytes: null,
          formatError: count !== 1 || (next?.role === 'user' && FORMAT_ERROR.test(next.content)),
          timeout: false,
          truncated: false,
          tokens,
        });
      } else {
        const rc = /^<returncode>(-?\d+)<\/returncode>/.exec(m.content);
        steps.push({
          role: m.role === 'tool' ? 'tool' : 'user',
          actionKind: 'observation',
          command: null,
          exitCode: rc ? Number(rc[1]) : null,
          observationBytes: bytes,
          formatError: FORMAT_ERROR.test(m.content),
          timeout: TIMEOUT.test(m.content),
          truncated: TRUNCATED.test(m.content),
          tokens: null,
        });
      }
    }
    let verdict: Verdict | null = null;
    try {
      verdict = readVerdict(file, instanceId);
    } catch (err) {
      yield bad(file, 1, `its SWE-bench report could not be read (${(err as Error).message})`);
      return;
    }
    const modelStats = isRecord(info.model_stats) ? info.model_stats : {};
    const record: RolloutRecord = {
      step: 0,
      split: opts.split ?? 'val',
      promptId: instanceId,
      prompt: msgs.slice(0, promptEnd).map((m) => ({ role: m.role, content: m.content })),
      response: msgs.slice(promptEnd).map((m) => ({ role: m.role, content: m.content })),
      groundTruth: null,
      reward: verdict ? (verdict.resolved ? 1 : 0) : null,
      rewardComponents: verdict ? { resolved: verdict.resolved ? 1 : 0 } : {},
      correct: verdict ? verdict.resolved : null,
      extractedAnswer: typeof info.submission === 'string' ? info.submission : null,
      stopReason: typeof info.exit_status === 'string' ? info.exit_status : null,
      responseTokens: sawTokens ? completionTokens : null,
      numTurns: steps.filter((s) => s.role === 'assistant').length,
      errors: [],
      dataSource: 'swe-bench',
      envClass: 'mini-swe-agent',
      extra: {
        instance_id: instanceId,
        patch_applied: verdict?.applied ?? null,
        tests: verdict?.tests ?? null,
        instance_cost: typeof modelStats.instance_cost === 'number' ? modelStats.instance_cost : null,
        api_calls: typeof modelStats.api_calls === 'number' ? modelStats.api_calls : null,
        mini_version: typeof info.mini_version === 'string' ? info.mini_version : null,
      },
      steps,
    };
    yield { record, at: { file, record: 1 } };
  },
};

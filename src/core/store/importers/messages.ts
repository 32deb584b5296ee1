/**
 * Chat messages as OpenAI-style agents write them: content as text or parts, assistant
 * `tool_calls` (`{function: {name, arguments}}` or flat `{name, arguments}`, either one
 * stored as an object or as a JSON string, arguments as an object or a JSON string).
 */
import { isRecord } from './util';

export interface ToolCall {
  name: string;
  args: unknown;
}

function parseMaybeJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v; // a raw string, kept as is
  }
}

/** Tool calls of an assistant message, whatever shape they were stored in. */
export function toolCalls(m: Record<string, unknown>): ToolCall[] {
  const calls = m['tool_calls'];
  if (!Array.isArray(calls)) return [];
  return calls.map(parseMaybeJson).filter(isRecord).map((c) => {
    const fn = isRecord(c['function']) ? c['function'] : c;
    return { name: typeof fn['name'] === 'string' ? fn['name'] : '', args: parseMaybeJson(fn['arguments']) };
  });
}

const SHELL_TOOL = /^(bash|sh|shell|zsh|terminal|cmd|command|run|exec|execute|execute_bash|execute_command|run_bash|run_shell|run_command|shell_exec|bash_command)$|bash|shell|terminal/i;

/** The shell command of a shell tool call (`bash`, `execute_bash`, …), or null. */
export function shellCommand(name: string, args: unknown): string | null {
  if (!SHELL_TOOL.test(name)) return null;
  if (typeof args === 'string') return args;
  if (!isRecord(args)) return null;
  for (const key of ['command', 'cmd', 'script', 'bash_command', 'input']) {
    const value = args[key];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((s) => typeof s === 'string')) return value.join(' ');
  }
  return null;
}

/** A non-shell tool call as a command line: its name, then its arguments as JSON. */
export function toolCallText(call: ToolCall): string {
  const empty = call.args === undefined || call.args === null || (isRecord(call.args) && !Object.keys(call.args).length);
  const args = empty ? '' : typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
  return args ? `${call.name || 'tool'} ${args}` : call.name || 'tool';
}

/** Text of a message content: a string, or the text parts of a content list. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) return content.map((p) => (isRecord(p) && typeof p['text'] === 'string' ? p['text'] : typeof p === 'string' ? p : '')).join('');
  return JSON.stringify(content);
}

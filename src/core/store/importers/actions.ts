import type { Step } from '../../model';

export type ActionKind = Step['actionKind'];

const SUBMIT = /\b(COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b|^\s*submit\s*$/m;
const TEST = /(^|[\s;&|(])(pytest|py\.test|tox|nox|unittest|nosetests|npm (run )?test|yarn test|go test|cargo test|make (check|test)|\.\/runtests\.py|runtests\.py|python[\d.]* -m (pytest|unittest)|python[\d.]* [^\s;&|]*(test|reproduce|repro)[^\s;&|]*\.py)\b/;
/**
 * Commands that write files, through an editor tool or a script: `sed -i` / `--in-place`
 * (options in any order), `perl -i`, `tee`, `cat >` and heredocs into a file, a shell
 * redirect into a named file, `patch` / `git apply`, and python writing a file
 * (`open(…, 'w' | 'a' | 'x' | 'r+' …)`, `Path.write_text` / `write_bytes`).
 */
const EDIT = new RegExp(
  [
    String.raw`(^|[\s;&|(])(str_replace|edit_file|create_file|apply_patch|patch\b|git apply|tee\b)`,
    String.raw`(^|[\s;&|(])sed\s+([^|;&\n]*\s)?(-[a-zA-Z]*i|--in-place)`,
    String.raw`(^|[\s;&|(])perl\s+([^|;&\n]*\s)?-[a-zA-Z0-9]*i`,
    String.raw`\bcat\s*(<<|>)`,
    String.raw`(^|[^<>&0-9])>>?\s*[^\s&>|]+\.\w+`,
    String.raw`\bopen\([^)]*['"]([wax]|r\+)[bt+]*['"]`,
    String.raw`\.write_(text|bytes)\(`,
  ].join('|'),
);
const SEARCH = /(^|[\s;&|(])(grep|rg|ag|find|ls|tree|cat|head|tail|less|more|nl|sed -n|awk|wc|locate|fd|git (grep|ls-files)|search_dir|search_file|find_file|open)\b/;

/**
 * What an agent's shell command does, for behavior metrics (edit coverage, self-test
 * rate, search-before-edit). Ordered by what matters most when a command does several
 * things: submitting, then testing, then editing, then reading.
 */
export function classifyCommand(command: string | null | undefined): ActionKind {
  if (!command || !command.trim()) return 'other';
  if (SUBMIT.test(command)) return 'submit';
  if (TEST.test(command)) return 'test';
  if (EDIT.test(command)) return 'edit';
  if (SEARCH.test(command)) return 'search';
  return 'command';
}

/** The single fenced shell block of an agent message (mini-swe-agent's contract), if any. */
export function extractBashBlock(content: string): { command: string | null; count: number } {
  const blocks = [...content.matchAll(/```(?:bash|sh|shell)?[ \t]*\r?\n([\s\S]*?)```/g)];
  return { command: blocks.length ? blocks[0]![1]!.trim() : null, count: blocks.length };
}

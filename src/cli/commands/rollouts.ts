import type { RolloutRow, StepRow } from '../../core/store/store';
import { preview, sanitizeForTerminal } from '../../core/util/text';
import { UsageError } from '../args';
import { flagString, out, type Command } from '../command';
import { STORE_FLAG, withStore } from '../store';

function intFlag(flags: Record<string, string | boolean>, name: string): number | undefined {
  const v = flagString(flags, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be an integer, got "${v}"`);
  return Number(v);
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

/** Chat messages / turns as `[role]` blocks; plain text as is. Always sanitized. */
function conversation(text: string | null, structured: boolean): string[] {
  if (!text) return [''];
  if (structured) {
    try {
      const msgs = JSON.parse(text) as { role?: unknown; content?: unknown }[];
      if (Array.isArray(msgs)) return msgs.flatMap((m) => [`[${String(m.role ?? '?')}]`, sanitizeForTerminal(typeof m.content === 'string' ? m.content : JSON.stringify(m.content))]);
    } catch {
      // stored as text after all
    }
  }
  return [sanitizeForTerminal(text)];
}

function showText(r: RolloutRow, steps: StepRow[]): string {
  const head = [
    `rollout ${r.id}  run ${r.run_id}${r.version ? `  version ${r.version}` : ''}  ${r.framework}  step ${r.step}  ${r.split}`,
    `group ${r.group_id}  sample ${r.sample_index}  prompt ${r.prompt_id}`,
    `reward ${r.reward ?? '—'}  correct ${r.correct ?? '—'}  turns ${r.num_turns ?? '—'}  stop ${r.stop_reason ?? '—'}  tokens ${r.response_tokens ?? '—'}`,
    r.reward_components ? `components ${JSON.stringify(r.reward_components)}` : '',
    r.extracted_answer ? `answer ${preview(r.extracted_answer, 200)}` : '',
    `source ${r.raw_ref}`,
  ].filter(Boolean);
  const body = ['', '── prompt', ...conversation(r.prompt, r.prompt_format === 'messages'), '', '── response', ...conversation(r.response, r.response_format === 'turns')];
  if (r.ground_truth) body.push('', '── ground truth', sanitizeForTerminal(r.ground_truth));
  if (steps.length) {
    body.push('', `── steps (${steps.length})`);
    for (const s of steps) {
      const flags = [s.format_error && 'format-error', s.timeout && 'timeout', s.truncated && 'truncated'].filter(Boolean).join(',');
      body.push(`${String(s.turn).padStart(4)} ${s.role.padEnd(9)} ${s.action_kind.padEnd(11)} ${s.exit_code ?? ''}`.trimEnd() + `${flags ? ` [${flags}]` : ''}${s.command ? `  $ ${preview(s.command, 100)}` : ''}`);
    }
  }
  return [...head, ...body].join('\n');
}

export const rollouts: Command = {
  summary: 'list and show imported rollouts',
  usage: 'evotrainer rollouts list [filters] | evotrainer rollouts show ID',
  flags: {
    run: { type: 'string', description: 'only this run' },
    version: { type: 'string', description: 'only this version' },
    split: { type: 'string', description: 'train or val' },
    step: { type: 'string', description: 'only this training step' },
    group: { type: 'string', description: 'only this group id' },
    correct: { type: 'string', description: 'true or false' },
    sort: { type: 'string', description: 'id, step, reward, num_turns, response_tokens (prefix - for descending)' },
    limit: { type: 'string', description: 'rows per page (default 50)' },
    offset: { type: 'string', description: 'rows to skip' },
    json: { type: 'boolean', description: 'print JSON' },
    ...STORE_FLAG,
  },
  async run(flags, [sub, ...rest]) {
    if (sub === 'list') {
      const correct = flagString(flags, 'correct');
      if (correct !== undefined && correct !== 'true' && correct !== 'false') throw new UsageError('--correct must be true or false');
      const split = flagString(flags, 'split');
      if (split !== undefined && split !== 'train' && split !== 'val') throw new UsageError('--split must be train or val');
      const rows = await withStore(flags, (s) =>
        s.listRollouts({
          run: flagString(flags, 'run'),
          version: flagString(flags, 'version'),
          split: split as 'train' | 'val' | undefined,
          step: intFlag(flags, 'step'),
          group: flagString(flags, 'group'),
          correct: correct === undefined ? undefined : correct === 'true',
          sort: flagString(flags, 'sort'),
          limit: intFlag(flags, 'limit'),
          offset: intFlag(flags, 'offset'),
        }),
      );
      if (flags.json) out(JSON.stringify(rows, null, 2));
      else if (!rows.length) out('No rollouts match. Import some with `evotrainer import PATH`.');
      else out(table(rows.map((r) => ({ ...r, prompt: preview(r.prompt_preview, 50) })), ['id', 'run_id', 'step', 'split', 'sample_index', 'reward', 'correct', 'num_turns', 'stop_reason', 'prompt']));
      return 0;
    }
    if (sub === 'show') {
      const id = rest[0];
      if (!id || !/^\d+$/.test(id)) throw new UsageError('rollouts show needs a rollout id (see `evotrainer rollouts list`)');
      const found = await withStore(flags, (s) => s.getRollout(Number(id)));
      if (!found) {
        process.stderr.write(`evotrainer rollouts: no rollout with id ${id}\n`);
        return 1;
      }
      out(flags.json ? JSON.stringify(found, null, 2) : showText(found.rollout, found.steps));
      return 0;
    }
    throw new UsageError(sub ? `unknown subcommand "${sub}"; use list or show` : 'use `rollouts list` or `rollouts show ID`');
  },
};

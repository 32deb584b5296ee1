import type { DuckDBValue } from '@duckdb/node-api';
import { FAILURE_MODES, SUGGESTED_LAYER, type FailureMode } from '../diagnose/failureModes';
import type { RolloutRow, RolloutStore, StepRow } from '../store/store';
import { chatTurns, TURN_MARKER } from '../store/importers/verl';
import {
  EXPLORER_COLUMNS,
  type ExplorerFacets,
  type ExplorerFilter,
  type ExplorerPage,
  type ExplorerQuery,
  type ExplorerRow,
  type FailureModeBar,
  type TextChunk,
  type TextPart,
  type TokenStrip,
  type Trajectory,
  type TrajectoryMessage,
} from './types';

/** Characters of one text sent with a trajectory; the rest comes a page at a time. */
export const INLINE_CHARS = 16_000;
/** Characters one "show more" brings. */
export const MORE_CHARS = 64_000;
/** Rows one page request may ask for. */
export const MAX_PAGE_ROWS = 100_000;
/** Longest search term accepted. */
export const MAX_SEARCH_CHARS = 200;

export function chunk(text: string, offset = 0, size = INLINE_CHARS): TextChunk {
  const start = Math.max(0, Math.min(offset, text.length));
  let end = Math.min(text.length, start + size);
  // Never split a surrogate pair: the half would render as a replacement character.
  if (end < text.length && /[\ud800-\udbff]/.test(text.charAt(end - 1))) end--;
  return { text: text.slice(start, end), length: text.length, end };
}

/** A unified diff, as agents submit it (`git diff` output). */
export function looksLikeDiff(s: string | null | undefined): s is string {
  return typeof s === 'string' && /^(diff --git |--- \S|Index: |@@ -\d)/m.test(s) && /^[+-]/m.test(s);
}

/**
 * The failure explorer's queries over a rollout store: pages of rollouts filtered,
 * sorted and searched; the failure-mode histogram; one trajectory with its steps.
 *
 * The first call builds an index of one narrow row per rollout (features, failure mode,
 * a one-line preview) in a temp table, so paging through 100,000 rows never recomputes
 * the features; `refresh()` rebuilds it after an import.
 */
export class Explorer {
  private built = false;
  private searchTerm: string | null = null;
  /** The last trajectory's full texts, for "show more" without re-reading the store. */
  private cached: { id: number; texts: Map<string, string> } | null = null;

  constructor(readonly store: RolloutStore) {}

  /** Builds (or rebuilds) the index; returns how long it took in ms. */
  async refresh(): Promise<number> {
    const t = performance.now();
    await this.store.ensureDerivedViews();
    await this.store.createTempTable({
      name: 'explore_index',
      select: `select r.id, r.run_id, r.version, r.step, r.split, r.prompt_id, r.group_id, r.sample_index,
              r.reward, r.correct, r.num_turns, r.response_tokens, r.stop_reason,
              coalesce(f.failure_mode, 'unknown') as failure_mode,
              left(regexp_replace(trim(coalesce(case when r.prompt_format = 'messages'
                     then coalesce(try(json_extract_string(r.prompt, '$[#-1].content')), r.prompt) else r.prompt end, '')), '\\s+', ' ', 'g'), 160) as preview
       from rollouts r left join rollout_failure_modes f on f.id = r.id`,
    });
    this.built = true;
    this.searchTerm = null;
    this.cached = null;
    return performance.now() - t;
  }

  private async ensure(): Promise<void> {
    if (!this.built) await this.refresh();
  }

  /** Rows matching a search term are computed once per term and kept while it is the current one. */
  private async ensureSearch(term: string): Promise<void> {
    if (this.searchTerm === term) return;
    await this.store.createTempTable({
      name: 'explore_match',
      select: `select id from rollouts
       where strpos(lower(coalesce(response, '')), $1) > 0 or strpos(lower(coalesce(prompt, '')), $1) > 0
          or strpos(lower(prompt_id), $1) > 0 or strpos(lower(coalesce(extracted_answer, '')), $1) > 0`,
      params: [term],
    });
    this.searchTerm = term;
  }

  private async where(filter: ExplorerFilter, opts: { skipFailureMode?: boolean } = {}): Promise<{ sql: string; params: DuckDBValue[] }> {
    const where: string[] = [];
    const params: DuckDBValue[] = [];
    const add = (sql: string, v: DuckDBValue) => {
      params.push(v);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.failureMode !== undefined && !opts.skipFailureMode) {
      if (!(FAILURE_MODES as readonly string[]).includes(filter.failureMode)) {
        throw new Error(`unknown failure mode "${filter.failureMode}"; choose one of ${FAILURE_MODES.join(', ')}`);
      }
      add('failure_mode = ?', filter.failureMode);
    }
    if (filter.run !== undefined) add('run_id = ?', filter.run);
    if (filter.version !== undefined) add('version = ?', filter.version);
    if (filter.step !== undefined) {
      if (!Number.isInteger(filter.step)) throw new Error(`step must be an integer, got ${filter.step}`);
      add('step = ?', filter.step);
    }
    if (filter.correct === 'true') where.push('correct');
    else if (filter.correct === 'false') where.push('correct = false');
    else if (filter.correct === 'unknown') where.push('correct is null');
    const term = filter.search?.trim().toLowerCase();
    if (term) {
      if (term.length > MAX_SEARCH_CHARS) throw new Error(`the search term is longer than ${MAX_SEARCH_CHARS} characters`);
      await this.ensureSearch(term);
      where.push('id in (select id from explore_match)');
    }
    return { sql: where.length ? `where ${where.join(' and ')}` : '', params };
  }

  async page(q: ExplorerQuery): Promise<ExplorerPage> {
    await this.ensure();
    if (!(EXPLORER_COLUMNS as readonly string[]).includes(q.sort.column)) {
      throw new Error(`cannot sort by "${q.sort.column}"; choose one of ${EXPLORER_COLUMNS.join(', ')}`);
    }
    const limit = Math.max(1, Math.min(Math.trunc(q.limit) || 1, MAX_PAGE_ROWS));
    const offset = Math.max(0, Math.trunc(q.offset) || 0);
    const { sql, params } = await this.where(q.filter);
    const total = (await this.store.one<{ n: number }>(`select count(*) as n from explore_index ${sql}`, params))!.n;
    const dir = q.sort.descending ? 'desc' : 'asc';
    const rows = await this.store.all<ExplorerRow>(
      `select id, run_id, version, step, split, failure_mode, correct, reward, num_turns, response_tokens, stop_reason, prompt_id, preview
       from explore_index ${sql} order by ${q.sort.column} ${dir} nulls last, id ${dir} limit ${limit} offset ${offset}`,
      params,
    );
    return { total, offset, rows };
  }

  /** Rollouts per failure mode under every filter but the failure mode itself (so each bar is clickable). */
  async histogram(filter: ExplorerFilter = {}): Promise<FailureModeBar[]> {
    await this.ensure();
    const { sql, params } = await this.where(filter, { skipFailureMode: true });
    const rows = await this.store.all<{ mode: string; count: number }>(`select failure_mode as mode, count(*) as count from explore_index ${sql} group by 1 order by 2 desc, 1`, params);
    return rows.map((r) => ({ ...r, layer: SUGGESTED_LAYER[r.mode as FailureMode] ?? '' }));
  }

  async facets(): Promise<ExplorerFacets> {
    await this.ensure();
    const s = (await this.store.one<{ n: number; lo: number | null; hi: number | null }>(`select count(*) as n, min(step) as lo, max(step) as hi from explore_index`))!;
    const runs = await this.store.all<{ v: string }>(`select distinct run_id as v from explore_index order by 1`);
    const versions = await this.store.all<{ v: string }>(`select distinct version as v from explore_index where version is not null order by 1`);
    return {
      rollouts: s.n,
      runs: runs.map((r) => r.v),
      versions: versions.map((r) => r.v),
      steps: s.lo === null || s.hi === null ? null : { min: s.lo, max: s.hi },
      failureModes: [...FAILURE_MODES],
    };
  }

  /** Where a rollout sits in a query's order (to scroll to it), or null when the filter hides it. */
  async position(q: Omit<ExplorerQuery, 'offset' | 'limit'>, id: number): Promise<number | null> {
    await this.ensure();
    const { sql, params } = await this.where(q.filter);
    const dir = q.sort.descending ? 'desc' : 'asc';
    params.push(id);
    const r = await this.store.one<{ pos: number }>(
      `select pos from (select id, row_number() over (order by ${q.sort.column} ${dir} nulls last, id ${dir}) - 1 as pos from explore_index ${sql}) where id = $${params.length}`,
      params,
    );
    return r ? r.pos : null;
  }

  async trajectory(id: number): Promise<Trajectory | null> {
    await this.ensure();
    const found = await this.store.getRollout(id);
    if (!found) return null;
    const mode = await this.store.one<{ failure_mode: string }>(`select failure_mode from explore_index where id = $1`, [id]);
    const { rollout: r, steps } = found;
    const texts = new Map<string, string>();
    const messages = alignMessages(r, steps).map((m) => {
      texts.set(`message:${m.index}`, m.full);
      const { full, ...rest } = m;
      return { ...rest, content: chunk(full) } satisfies TrajectoryMessage;
    });
    const submission = looksLikeDiff(r.extracted_answer) ? r.extracted_answer : looksLikeDiff(r.extra?.patch as string) ? (r.extra!.patch as string) : null;
    if (submission) texts.set('diff', submission);
    const answer = !submission && r.extracted_answer ? r.extracted_answer : null;
    if (answer) texts.set('answer', answer);
    if (r.ground_truth) texts.set('groundTruth', r.ground_truth);
    this.cached = { id, texts };
    const replies = messages.filter((m) => m.role === 'assistant' && m.part !== 'prompt').map((m) => m.index);
    const tokenRows = await this.store.all<{ turn: number; kind: TokenStrip['kind']; token_values: number[] }>(`select turn, kind, token_values from rollout_tokens where rollout_id = $1 order by turn, kind`, [id]);
    const tokens = tokenRows.map((t) => ({ turn: t.turn, messageIndex: replies[t.turn] ?? null, kind: t.kind, values: t.token_values.map((v) => (Number.isFinite(v) ? Math.round(v * 1e4) / 1e4 : null)) }));
    return {
      id: r.id,
      run_id: r.run_id,
      version: r.version,
      step: r.step,
      split: r.split,
      prompt_id: r.prompt_id,
      group_id: r.group_id,
      sample_index: r.sample_index,
      failure_mode: mode?.failure_mode ?? 'unknown',
      reward: r.reward,
      reward_components: r.reward_components,
      correct: r.correct,
      num_turns: r.num_turns,
      stop_reason: r.stop_reason,
      raw_ref: r.raw_ref,
      messages,
      diff: submission ? chunk(submission) : null,
      answer: answer ? chunk(answer) : null,
      groundTruth: r.ground_truth ? chunk(r.ground_truth) : null,
      tokens,
    };
  }

  /** The next piece of a long text of a trajectory ("show more"). */
  async more(id: number, part: TextPart, offset: number, size = MORE_CHARS): Promise<TextChunk | null> {
    if (this.cached?.id !== id) {
      if (!(await this.trajectory(id))) return null;
    }
    const key = part.kind === 'message' ? `message:${part.index}` : part.kind;
    const text = this.cached!.texts.get(key);
    if (text === undefined) return null;
    return chunk(text, offset, Math.max(1, Math.min(size, 1_000_000)));
  }
}

interface AlignedMessage extends Omit<TrajectoryMessage, 'content'> {
  full: string;
}

function parseMessages(text: string | null, structured: boolean): { role: string; content: string }[] | null {
  if (!structured || !text) return null;
  try {
    const v = JSON.parse(text) as unknown;
    if (!Array.isArray(v)) return null;
    return v.map((m: { role?: unknown; content?: unknown }) => ({
      role: typeof m?.role === 'string' ? m.role : '?',
      content: typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? null, null, 2),
    }));
  } catch {
    return null;
  }
}

/**
 * A transcript decoded through a chat template (verl's multi-turn rollouts: `<|im_start|>`
 * turns) as its turns, the way the importer cut it into steps; a tool result without its
 * `<tool_response>` wrapper. Null for text without turn markers.
 */
function templateTurns(text: string | null): { role: string; content: string }[] | null {
  if (!text || !TURN_MARKER.test(text)) return null;
  return chatTurns(text).map((t) => ({ role: t.role, content: t.content.replace(/^<tool_response>\s*([\s\S]*?)\s*<\/tool_response>$/, '$1') }));
}

/**
 * The conversation (prompt messages, then the response turns) with each message's step
 * beside it. Importers write one step per message of the whole conversation, or one per
 * response turn; anything else is shown without steps rather than misaligned.
 */
export function alignMessages(r: Pick<RolloutRow, 'prompt' | 'prompt_format' | 'response' | 'response_format'>, steps: StepRow[]): AlignedMessage[] {
  const promptMsgs = parseMessages(r.prompt, r.prompt_format === 'messages') ?? templateTurns(r.prompt) ?? (r.prompt ? [{ role: 'user', content: r.prompt }] : []);
  const responseMsgs = parseMessages(r.response, r.response_format === 'turns') ?? templateTurns(r.response) ?? (r.response !== null ? [{ role: 'assistant', content: r.response }] : []);
  const all = [...promptMsgs.map((m) => ({ ...m, part: 'prompt' as const })), ...responseMsgs.map((m) => ({ ...m, part: 'response' as const }))];
  const byTurn = new Map(steps.map((s) => [s.turn, s]));
  const shift = steps.length === all.length ? 0 : steps.length === responseMsgs.length ? promptMsgs.length : null;
  return all.map((m, index) => {
    const s = shift === null || index < shift ? undefined : byTurn.get(index - shift);
    return {
      index,
      role: m.role,
      part: m.part,
      full: m.content,
      actionKind: s?.action_kind ?? null,
      command: s?.command ?? null,
      exitCode: s?.exit_code ?? null,
      formatError: s?.format_error ?? false,
      timeout: s?.timeout ?? false,
      truncated: s?.truncated ?? false,
    };
  });
}

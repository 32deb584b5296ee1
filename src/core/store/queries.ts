/**
 * Reads of the rollout store: the rollout list, one rollout with its steps, the counts.
 */
import type { DuckDBValue } from '@duckdb/node-api';
import type { Split } from '../model';
import type { StoreDb } from './instances';

export interface RolloutRow {
  id: number;
  run_id: string;
  version: string | null;
  framework: string;
  step: number;
  split: string;
  prompt_id: string;
  group_id: string;
  sample_index: number;
  prompt: string | null;
  prompt_format: string | null;
  response: string | null;
  response_format: string | null;
  ground_truth: string | null;
  reward: number | null;
  reward_components: Record<string, number> | null;
  correct: boolean | null;
  extracted_answer: string | null;
  advantage: number | null;
  stop_reason: string | null;
  response_tokens: number | null;
  num_turns: number | null;
  errors: string[] | null;
  timing_ms: number | null;
  data_source: string | null;
  env_class: string | null;
  extra: Record<string, unknown> | null;
  raw_ref: string;
}

export interface StepRow {
  rollout_id: number;
  turn: number;
  role: string;
  action_kind: string;
  command: string | null;
  exit_code: number | null;
  observation_bytes: number | null;
  format_error: boolean;
  timeout: boolean;
  truncated: boolean;
  tokens: number | null;
}

export interface ListQuery {
  run?: string;
  version?: string;
  split?: Split;
  step?: number;
  group?: string;
  correct?: boolean;
  /** Column to sort by; a leading '-' sorts descending. */
  sort?: string;
  limit?: number;
  offset?: number;
}

export type RolloutSummary = Pick<RolloutRow, 'id' | 'run_id' | 'version' | 'framework' | 'step' | 'split' | 'prompt_id' | 'group_id' | 'sample_index' | 'reward' | 'correct' | 'num_turns' | 'stop_reason' | 'response_tokens' | 'raw_ref'> & { prompt_preview: string };

const SORTABLE = new Set(['id', 'step', 'reward', 'num_turns', 'response_tokens', 'sample_index', 'run_id', 'group_id']);

export async function listRollouts(db: StoreDb, q: ListQuery = {}): Promise<RolloutSummary[]> {
  const where: string[] = [];
  const params: DuckDBValue[] = [];
  const add = (sql: string, v: DuckDBValue) => {
    where.push(sql);
    params.push(v);
  };
  if (q.run !== undefined) add('run_id = ?', q.run);
  if (q.version !== undefined) add('version = ?', q.version);
  if (q.split !== undefined) add('split = ?', q.split);
  if (q.step !== undefined) add('step = ?', q.step);
  if (q.group !== undefined) add('group_id = ?', q.group);
  if (q.correct !== undefined) add('correct = ?', q.correct);
  const sortKey = (q.sort ?? 'id').replace(/^-/, '');
  if (!SORTABLE.has(sortKey)) throw new Error(`cannot sort by "${sortKey}"; choose one of ${[...SORTABLE].join(', ')}`);
  const dir = q.sort?.startsWith('-') ? 'desc' : 'asc';
  const limit = Math.max(1, Math.min(q.limit ?? 50, 10_000));
  const offset = Math.max(0, q.offset ?? 0);
  return db.all<RolloutSummary>(
    `select id, run_id, version, framework, step, split, prompt_id, group_id, sample_index, reward, correct, num_turns, stop_reason, response_tokens, raw_ref,
            left(prompt, 120) as prompt_preview
     from rollouts ${where.length ? `where ${where.join(' and ')}` : ''}
     order by ${sortKey} ${dir} nulls last, id asc limit ${limit} offset ${offset}`,
    params,
  );
}

export async function getRollout(db: StoreDb, id: number): Promise<{ rollout: RolloutRow; steps: StepRow[] } | null> {
  const [rollout] = await db.prepared<RolloutRow>(`select * from rollouts where id = $1`, [id]);
  if (!rollout) return null;
  for (const k of ['reward_components', 'errors', 'extra'] as const) {
    const v = rollout[k] as unknown;
    if (typeof v === 'string') (rollout as unknown as Record<string, unknown>)[k] = JSON.parse(v);
  }
  const steps = await db.prepared<StepRow>(`select * from steps where rollout_id = $1 order by turn`, [id]);
  return { rollout, steps };
}

export async function counts(db: StoreDb): Promise<{ runs: number; rollouts: number; steps: number; groups: number; imports: number; quarantined: number }> {
  const r = await db.one<Record<string, number>>(
    `select (select count(distinct run_id) from rollouts) as runs, (select count(*) from rollouts) as rollouts, (select count(*) from steps) as steps,
            (select count(distinct (run_id, group_id)) from rollouts) as groups, (select count(*) from imports) as imports,
            (select count(*) from quarantine q where q.import_id in (select id from imports)) as quarantined`,
  );
  return r as { runs: number; rollouts: number; steps: number; groups: number; imports: number; quarantined: number };
}

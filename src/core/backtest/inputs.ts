import type { DuckDBBlobVector, DuckDBValue } from '@duckdb/node-api';
import { scopeWhere, type Scope } from '../diagnose/health';
import type { RolloutStore } from '../store/store';
import type { CallResult, FunctionKind, FunctionSpec, SerializedChunk, WorkerPool } from './pool';

/**
 * What the harness's reward functions are called with, built from cached rollouts: as
 * values (for runners that ship lists of items), or streamed from the store straight to a
 * local worker pool, a chunk at a time, reading only the columns the reward needs.
 */

/** The columns of a cached rollout that the reward's inputs are built from. */
export interface RewardSource {
  id: number;
  prompt: string | null;
  response: string | null;
  ground_truth: string | null;
  data_source: string | null;
  correct: boolean | null;
  reward_components: Record<string, number> | string | null;
  num_turns: number | null;
  extra: Record<string, unknown> | string | null;
}

const SOURCE_COLUMNS = ['id', 'prompt', 'response', 'ground_truth', 'data_source', 'correct', 'reward_components', 'num_turns', 'extra'] as const;

export const asObject = (v: unknown): Record<string, unknown> | null => {
  if (v && typeof v === 'object') return v as Record<string, unknown>;
  if (typeof v === 'string') {
    try {
      const o = JSON.parse(v) as unknown;
      return o && typeof o === 'object' ? (o as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }
  return null;
};

/**
 * verl's call. A cached rollout cannot replay its environment, so extra_info carries what
 * the run logged about the episode: the dump's extra keys, its reward components and its
 * binary correctness as `acc` — a reward that depends on the environment's outcome reads
 * it from there.
 */
export function verlItem(r: RewardSource) {
  const extra = asObject(r.extra) ?? {};
  const comps = asObject(r.reward_components) ?? {};
  return {
    data_source: r.data_source ?? 'unknown',
    solution_str: r.response ?? '',
    ground_truth: r.ground_truth ?? '',
    extra_info: { ...comps, ...extra, ...(r.correct === null ? {} : { acc: r.correct }), index: r.id, prompt: r.prompt, num_turns: r.num_turns },
  };
}

export function trlItem(r: RewardSource) {
  const extra = asObject(r.extra) ?? {};
  const columns: Record<string, unknown> = { ground_truth: r.ground_truth, answer: r.ground_truth, solution: r.ground_truth, data_source: r.data_source };
  for (const [k, v] of Object.entries(extra)) if (!(k in columns) && (v === null || typeof v !== 'object')) columns[k] = v;
  return { prompt: r.prompt ?? '', completion: r.response ?? '', columns };
}

export const rewardItem = (kind: FunctionKind, r: RewardSource) => (kind === 'trl' ? trlItem(r) : verlItem(r));

/** A chunk of the store's rollouts as the reward's items: their ids, and each item's JSON. */
interface ItemChunk {
  ids: number[];
  texts: SerializedChunk;
}

const COMMA = Buffer.from(',');

/** The rollouts of `selector` (its `limit` first by id), as a FROM clause with its parameters. */
function selection(selector: Scope & { limit?: number }, columns: string): { from: string; params: DuckDBValue[] } {
  const { sql, params } = scopeWhere(selector);
  if (!selector.limit) return { from: `(select ${columns} from rollouts ${sql})`, params };
  return { from: `(select ${columns} from rollouts ${sql} order by id limit ${Math.floor(selector.limit)})`, params };
}

/**
 * verl's call for a reward that never reads extra_info: the three text columns, serialized
 * by DuckDB itself (no value passes through JavaScript), extra_info null.
 */
async function* narrowVerlItems(store: RolloutStore, selector: Scope & { limit?: number }): AsyncGenerator<ItemChunk> {
  const { from, params } = selection(selector, 'id, response, ground_truth, data_source');
  // As UTF-8 bytes (encode: a BLOB of the text as it is): they go to the workers as read.
  // The id as a DOUBLE (exact below 2^53): read without making a BigInt of each.
  const sql = `select id::double, encode(to_json({data_source: coalesce(data_source, 'unknown'), solution_str: coalesce(response, ''), ground_truth: coalesce(ground_truth, ''), extra_info: null})::varchar) from ${from}`;
  for await (const chunk of store.dataChunks(sql, params)) {
    const idv = chunk.getColumnVector(0);
    const json = chunk.getColumnVector(1) as DuckDBBlobVector;
    // (rowCount asks the native chunk each time)
    const rows = chunk.rowCount;
    const ids = new Array<number>(rows);
    // Joined at once (one buffer per chunk, not one object per item held while the workers start).
    const parts: Uint8Array[] = [];
    const ends = new Array<number>(rows);
    let at = 0;
    for (let i = 0; i < rows; i++) {
      ids[i] = idv.getItem(i) as number;
      const bytes = json.getItemBytes(i)!;
      if (i) parts.push(COMMA);
      parts.push(bytes);
      at += (i ? 1 : 0) + bytes.length;
      ends[i] = at;
    }
    yield { ids, texts: { joined: Buffer.concat(parts, at), ends } };
  }
}

async function* fullItems(store: RolloutStore, selector: Scope & { limit?: number }, kind: FunctionKind): AsyncGenerator<ItemChunk> {
  const { from, params } = selection(selector, SOURCE_COLUMNS.join(', '));
  for await (const cols of store.chunks(`select ${SOURCE_COLUMNS.join(', ')} from ${from}`, params)) {
    const ids = cols[0]!.map(Number);
    const texts = ids.map((id, i) => {
      const r = { id } as Record<string, unknown>;
      SOURCE_COLUMNS.forEach((c, k) => k && (r[c] = cols[k]![i] ?? null));
      return JSON.stringify(rewardItem(kind, r as unknown as RewardSource));
    });
    yield { ids, texts };
  }
}

/**
 * Pulls `source` ahead of its consumer, up to `limit` chunks, from the moment it is called;
 * `iterate` yields what was read and then the rest; `cancel` stops the reading.
 */
function readAhead<T>(source: AsyncGenerator<T>, limit: number): { iterate(): AsyncGenerator<T>; cancel(): Promise<void> } {
  const buffered: T[] = [];
  let finished = false;
  let failure: { error: unknown } | null = null;
  let cancelled = false;
  let wake: (() => void) | null = null;
  const signal = () => {
    wake?.();
    wake = null;
  };
  const wait = () => new Promise<void>((r) => (wake = r));
  const pump = (async () => {
    try {
      while (!cancelled) {
        if (buffered.length >= limit) {
          await wait();
          continue;
        }
        const next = await source.next();
        if (next.done) break;
        buffered.push(next.value);
        signal();
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      signal();
    }
  })();
  return {
    async *iterate() {
      for (;;) {
        const item = buffered.shift();
        if (item !== undefined) {
          signal();
          yield item;
        } else if (failure) throw (failure as { error: unknown }).error;
        else if (finished) return;
        else await wait();
      }
    },
    async cancel() {
      cancelled = true;
      signal();
      await pump;
      await source.return(undefined);
    },
  };
}

/** How far the narrow read runs ahead of the workers: 64 chunks of 2,048 rollouts (some 50 MB of text). */
const READ_AHEAD_CHUNKS = 64;

/**
 * Scores the cached rollouts of `selector` with function `reward` of a local worker pool
 * (as it starts): the reward's inputs stream from the store to the workers, chunk by chunk,
 * while they score. Reading starts at once, ahead of the workers: for a verl reward it
 * reads the narrow form (no extra_info) until the workers report whether the function
 * reads extra_info, and starts over with whole rows if it does. Results by rollout id;
 * `onReadDone` is called once the last rows are read.
 */
export async function scoreFromStore(store: RolloutStore, selector: Scope & { limit?: number }, pool: Promise<WorkerPool>, reward: FunctionSpec, o: { onReadDone?: () => void } = {}): Promise<Map<number, CallResult>> {
  const ids: number[] = [];
  async function* whole(source: AsyncGenerator<ItemChunk>): AsyncGenerator<ItemChunk> {
    yield* source;
    o.onReadDone?.();
  }
  const narrow = reward.kind === 'verl' ? readAhead(whole(narrowVerlItems(store, selector)), READ_AHEAD_CHUNKS) : null;
  let p: WorkerPool;
  try {
    p = await pool;
  } catch (err) {
    await narrow?.cancel();
    throw err;
  }
  let source: AsyncGenerator<ItemChunk>;
  if (narrow && !p.readsExtraInfo(reward.name)) source = narrow.iterate();
  else {
    await narrow?.cancel();
    source = whole(fullItems(store, selector, reward.kind));
  }
  async function* texts(): AsyncGenerator<SerializedChunk> {
    for await (const chunk of source) {
      for (const id of chunk.ids) ids.push(id);
      yield chunk.texts;
    }
  }
  try {
    const results = await p.map(reward.name, texts());
    return new Map(ids.map((id, i) => [id, results[i]!]));
  } finally {
    await narrow?.cancel();
  }
}

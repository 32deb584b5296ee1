import * as z from 'zod/mini';
import { EXPLORER_COLUMNS, type ExplorerFacets, type ExplorerFilter, type ExplorerPage, type ExplorerSort, type FailureModeBar, type TextChunk, type TextPart, type Trajectory, type TrajectoryMessage } from '../../core/explore/types';
import { IpcNotification, IpcRequest } from '../protocol';

export type * from '../../core/explore/types';
export { EXPLORER_COLUMNS } from '../../core/explore/types';

/** Rows per page the table fetches. */
export const PAGE_ROWS = 200;

/** How "Open Failure Explorer" may be called (the Findings view passes a failure mode). */
export interface OpenExplorerArgs {
  failureMode?: string;
  run?: string;
  version?: string;
  /** The rollouts dumped at one training step (a step picked on the training curves). */
  step?: number;
  rolloutId?: number;
  /**
   * With rolloutId: the agent turn to show, as the gate's answer-in-context check counts
   * turns (1-based; 0: what the environment said before the first). Its messages are
   * marked and scrolled to.
   */
  turn?: number;
}

export interface ExplorerState {
  status: 'loading' | 'ready' | 'empty' | 'failed';
  /** The store file, for the header. */
  store: string | null;
  error: string | null;
  facets: ExplorerFacets | null;
  filter: ExplorerFilter;
  sort: ExplorerSort;
  /** The first page, so the first paint needs no round trip. */
  page: ExplorerPage | null;
  histogram: FailureModeBar[];
  /** A trajectory to open at once (and scroll to). */
  openRolloutId: number | null;
  /** Where that rollout sits in the table, when the filter shows it. */
  openRolloutPosition: number | null;
  /** The agent turn of that rollout to show (see OpenExplorerArgs.turn). */
  openRolloutTurn: number | null;
  /** A non-virtualized table of the first N rows: the benchmark's baseline (never set in normal use). */
  baselineRows?: number;
}

export interface QueryParams {
  filter: ExplorerFilter;
  sort: ExplorerSort;
  offset: number;
  limit: number;
  /** Recount the histogram too (the filter changed). */
  withHistogram: boolean;
}

export interface PageResult {
  page: ExplorerPage;
  /** Null unless asked for. */
  histogram: FailureModeBar[] | null;
}

export interface MoreTextParams {
  id: number;
  part: TextPart;
  offset: number;
}

// What arrives is validated before anything runs: strings are bounded, numbers integral.
const name = z.string().check(z.maxLength(500));
const rolloutId = z.number().check(z.int(), z.gte(0));
const turn = z.number().check(z.int(), z.gte(0), z.lte(1_000_000));
const filter = z.strictObject({
  failureMode: z.optional(name),
  run: z.optional(name),
  version: z.optional(name),
  step: z.optional(z.number().check(z.int())),
  correct: z.optional(z.enum(['true', 'false', 'unknown'])),
  search: z.optional(z.string().check(z.maxLength(200))),
});
const sort = z.strictObject({ column: z.enum(EXPLORER_COLUMNS), descending: z.boolean() });

export const QuerySchema = z.strictObject({
  filter,
  sort,
  offset: z.number().check(z.int(), z.gte(0)),
  limit: z.number().check(z.int(), z.gte(1), z.lte(1000)),
  withHistogram: z.boolean(),
});
export const OpenTrajectorySchema = z.strictObject({ id: rolloutId });
export const MoreTextSchema = z.strictObject({
  id: rolloutId,
  part: z.union([
    z.strictObject({ kind: z.literal('message'), index: z.number().check(z.int(), z.gte(0)) }),
    z.strictObject({ kind: z.enum(['diff', 'answer', 'groundTruth']) }),
  ]),
  offset: z.number().check(z.int(), z.gte(0)),
});
export const OpenExplorerArgsSchema = z.strictObject({
  failureMode: z.optional(name),
  run: z.optional(name),
  version: z.optional(name),
  step: z.optional(z.number().check(z.int())),
  rolloutId: z.optional(rolloutId),
  turn: z.optional(turn),
});

/** A page's request to open one rollout in the Failure Explorer, at one of its agent turns when given (see OpenExplorerArgs.turn). */
export interface OpenRolloutParams {
  rolloutId: number;
  turn?: number;
}
export const OpenRolloutParamsSchema = z.strictObject({ rolloutId, turn: z.optional(turn) });

/**
 * The messages of a trajectory that agent turn `turn` showed the agent: counting turns as
 * the answer-in-context check does (answerContext.ts), the response's messages that are not
 * the agent's own between its turn-th assistant message and the next one (turn 0: before
 * the first). Empty when the trajectory has no such turn.
 */
export function turnMessages(messages: readonly Pick<TrajectoryMessage, 'index' | 'role' | 'part'>[], turn: number): number[] {
  const out: number[] = [];
  let seen = 0;
  for (const m of messages) {
    if (m.part !== 'response') continue;
    if (m.role === 'assistant') {
      if (++seen > turn) break;
    } else if (seen === turn) out.push(m.index);
  }
  return out;
}

/** The explorer's whole vocabulary, in the editor and in `evotrainer view` alike. */
export const QueryRequest = new IpcRequest<QueryParams, PageResult>('explorer/query', QuerySchema);
/** A rollout's whole trajectory; fails when there is no such rollout. */
export const OpenTrajectoryRequest = new IpcRequest<{ id: number }, Trajectory>('explorer/openTrajectory', OpenTrajectorySchema);
/** The next chunk of a long text; fails when the text is gone (the store re-imported). */
export const MoreTextRequest = new IpcRequest<MoreTextParams, TextChunk>('explorer/moreText', MoreTextSchema);
/** Re-reads the store (closed and reopened) under the current filter. */
export const RefreshExplorerRequest = new IpcRequest<void, ExplorerState>('explorer/refresh', null);

/** What the page asks the explorer's host: its one method map (`ExplorerBackend.methods`). */
export const ExplorerMethods = {
  query: QueryRequest,
  openTrajectory: OpenTrajectoryRequest,
  moreText: MoreTextRequest,
  refresh: RefreshExplorerRequest,
};

/** A whole new state, pushed by the editor (the panel opened again with other arguments). */
export const ExplorerStateNotification = new IpcNotification<ExplorerState>('explorer/state');

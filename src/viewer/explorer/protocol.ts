import * as z from 'zod/mini';
import { EXPLORER_COLUMNS, type ExplorerFacets, type ExplorerFilter, type ExplorerPage, type ExplorerSort, type FailureModeBar, type TextChunk, type TextPart, type Trajectory } from '../../core/explore/types';
import { IpcCommand, IpcNotification } from '../protocol';

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
  /** A non-virtualized table of the first N rows: the benchmark's baseline (never set in normal use). */
  baselineRows?: number;
}

export interface QueryParams {
  requestId: number;
  filter: ExplorerFilter;
  sort: ExplorerSort;
  offset: number;
  limit: number;
  /** Recount the histogram too (the filter changed). */
  withHistogram: boolean;
}

export interface PageResult {
  requestId: number;
  page: ExplorerPage | null;
  histogram: FailureModeBar[] | null;
  error: string | null;
}

export interface TrajectoryResult {
  requestId: number;
  id: number;
  trajectory: Trajectory | null;
  error: string | null;
}

export interface MoreTextParams {
  requestId: number;
  id: number;
  part: TextPart;
  offset: number;
}

export interface TextResult {
  requestId: number;
  id: number;
  part: TextPart;
  chunk: TextChunk | null;
  error: string | null;
}

/** The explorer's whole vocabulary, in the editor and in `evotrainer view` alike. */
export const QueryCommand = new IpcCommand<QueryParams>('explorer/query');
export const OpenTrajectoryCommand = new IpcCommand<{ requestId: number; id: number }>('explorer/openTrajectory');
export const MoreTextCommand = new IpcCommand<MoreTextParams>('explorer/moreText');
export const RefreshExplorerCommand = new IpcCommand<void>('explorer/refresh');

export const PageNotification = new IpcNotification<PageResult>('explorer/page');
export const TrajectoryNotification = new IpcNotification<TrajectoryResult>('explorer/trajectory');
export const TextNotification = new IpcNotification<TextResult>('explorer/text');
export const ExplorerStateNotification = new IpcNotification<ExplorerState>('explorer/state');

// What arrives is validated before anything runs: strings are bounded, numbers integral.
const requestId = z.number().check(z.int(), z.gte(0));
const name = z.string().check(z.maxLength(500));
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
  requestId,
  filter,
  sort,
  offset: z.number().check(z.int(), z.gte(0)),
  limit: z.number().check(z.int(), z.gte(1), z.lte(1000)),
  withHistogram: z.boolean(),
});
export const OpenTrajectorySchema = z.strictObject({ requestId, id: z.number().check(z.int(), z.gte(0)) });
export const MoreTextSchema = z.strictObject({
  requestId,
  id: z.number().check(z.int(), z.gte(0)),
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
  rolloutId: z.optional(z.number().check(z.int(), z.gte(0))),
});

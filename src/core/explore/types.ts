/**
 * The failure explorer's data vocabulary: what the webview asks for and what it gets.
 * Plain data, no engine code: the webview bundle imports these types.
 */

export const EXPLORER_COLUMNS = ['id', 'run_id', 'version', 'step', 'failure_mode', 'correct', 'reward', 'num_turns', 'response_tokens', 'stop_reason', 'prompt_id'] as const;
export type ExplorerColumn = (typeof EXPLORER_COLUMNS)[number];

export type Correctness = 'true' | 'false' | 'unknown';

export interface ExplorerFilter {
  failureMode?: string;
  run?: string;
  version?: string;
  step?: number;
  correct?: Correctness;
  /** Case-insensitive substring of the prompt, the response, the task id or the submission. */
  search?: string;
}

export interface ExplorerSort {
  column: ExplorerColumn;
  descending: boolean;
}

export interface ExplorerQuery {
  filter: ExplorerFilter;
  sort: ExplorerSort;
  offset: number;
  limit: number;
}

export interface ExplorerRow {
  id: number;
  run_id: string;
  version: string | null;
  step: number;
  split: string;
  failure_mode: string;
  correct: boolean | null;
  reward: number | null;
  num_turns: number | null;
  response_tokens: number | null;
  stop_reason: string | null;
  prompt_id: string;
  /** The task in one line (the last prompt message for chats), at most 160 characters. */
  preview: string;
}

export interface ExplorerPage {
  total: number;
  offset: number;
  rows: ExplorerRow[];
}

export interface FailureModeBar {
  mode: string;
  count: number;
  layer: string;
}

export interface ExplorerFacets {
  rollouts: number;
  runs: string[];
  versions: string[];
  steps: { min: number; max: number } | null;
  failureModes: string[];
}

/** A long text cut for display; the rest is paged in on request ("show more"). */
export interface TextChunk {
  text: string;
  /** Characters of the whole text. */
  length: number;
  /** Where the shown part ends (== length when nothing is left). */
  end: number;
}

export interface TrajectoryMessage {
  /** Position in the whole conversation (prompt messages first). */
  index: number;
  role: string;
  /** 'prompt' for the task messages, 'response' for what the policy and its environment produced. */
  part: 'prompt' | 'response';
  content: TextChunk;
  /** From the step aligned with this message, when there is one. */
  actionKind: string | null;
  command: string | null;
  exitCode: number | null;
  formatError: boolean;
  timeout: boolean;
  truncated: boolean;
}

export interface Trajectory {
  id: number;
  run_id: string;
  version: string | null;
  step: number;
  split: string;
  prompt_id: string;
  group_id: string;
  sample_index: number;
  failure_mode: string;
  reward: number | null;
  reward_components: Record<string, number> | null;
  correct: boolean | null;
  num_turns: number | null;
  stop_reason: string | null;
  raw_ref: string;
  messages: TrajectoryMessage[];
  /** The submitted patch (a unified diff), when the rollout has one. */
  diff: TextChunk | null;
  /** A single-turn answer that is not a diff (math, QA). */
  answer: TextChunk | null;
  groundTruth: TextChunk | null;
  /** Per-token values the dump carried (log-probabilities, entropies), by model call. */
  tokens: TokenStrip[];
}

/** One model call's per-token values, placed on the message it produced. */
export interface TokenStrip {
  /** The model call's ordinal in the rollout. */
  turn: number;
  /** The trajectory message it produced (the turn-th assistant message after the prompt); null when there is none. */
  messageIndex: number | null;
  kind: 'logprob' | 'entropy';
  /** One value per token, in order; null where the trainer gave none. */
  values: (number | null)[];
}

/** Which long text a "show more" pages through. */
export type TextPart = { kind: 'message'; index: number } | { kind: 'diff' } | { kind: 'answer' } | { kind: 'groundTruth' };

/**
 * Normalized rows of the rollout store: one per rollout, one per step of a multi-turn
 * trajectory. Every importer produces exactly these, whatever the trainer wrote.
 */
import type { Split, StepRole, Step } from '../model';

/** A rollout as an importer yields it, before the store assigns ids and group indices. */
export interface RolloutRecord {
  /** Training step (global step) the rollout was sampled at; 0 when the format has none. */
  step: number;
  split: Split;
  /** The format's own prompt / task id, when it has one. */
  promptId?: string | null;
  /** The format's own group id, when it has one; otherwise the store uses (step, hash of prompt). */
  groupId?: string | null;
  /** Text, or a chat as `[{role, content}]` (stored as JSON text with promptFormat 'messages'). */
  prompt: string | { role: string; content: unknown }[];
  /** Text, or the turns of a multi-turn trajectory. */
  response: string | { role: string; content: unknown }[];
  groundTruth?: string | null;
  reward?: number | null;
  /** Named reward components (e.g. per reward function, format / correctness parts). */
  rewardComponents?: Record<string, number>;
  /** Binary correctness, kept apart from any shaped reward. */
  correct?: boolean | null;
  extractedAnswer?: string | null;
  advantage?: number | null;
  stopReason?: string | null;
  responseTokens?: number | null;
  numTurns?: number;
  errors?: string[];
  timingMs?: number | null;
  dataSource?: string | null;
  envClass?: string | null;
  /** Anything else the record carried, kept for queries (JSON). */
  extra?: Record<string, unknown>;
  /** Steps of a multi-turn trajectory, in order (turn index = position). */
  steps?: StepRecord[];
  /** Per-token values the dump carried, one list per model call (`turn`: its ordinal) and kind. */
  tokens?: TokenSeries[];
}

/** What a token value is: the sampled token's log-probability, or the distribution's entropy at it. */
export type TokenKind = 'logprob' | 'entropy';

export interface TokenSeries {
  turn: number;
  kind: TokenKind;
  values: number[];
}

export type StepRecord = Omit<Step, 'rolloutRef' | 'turn'> & { role: StepRole };

/** Where a record came from: `line` for JSONL (1-based), `record` for files of many records. */
export interface SourcePosition {
  file: string;
  line?: number;
  record?: number;
  /** Byte offset just after the record, for following growing files. */
  endOffset?: number;
}

/** A malformed record: fails the import with file:line, or goes to quarantine. */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly reason: string,
    readonly raw?: string,
  ) {
    super(`${file}${line !== null ? `:${line}` : ''}: ${reason}`);
    this.name = 'ImportError';
  }
}

export interface ImportedRecord {
  record: RolloutRecord;
  at: SourcePosition;
}

/** A record that could not be read; yielded so that skip / quarantine can carry on. */
export interface BadRecord {
  error: ImportError;
  at: SourcePosition;
}

export type ImporterItem = ImportedRecord | BadRecord;

export function isBad(item: ImporterItem): item is BadRecord {
  return 'error' in item;
}

/** A whole number (truncated), or null. */
export function int(v: number | null | undefined): number | null {
  return v === null || v === undefined || !Number.isFinite(v) ? null : Math.trunc(v);
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * A value an importer accepted that the store's integer columns cannot hold (a step of
 * 3e9, a token count past 2^31): a bad record with its line, like a malformed one, so
 * that --on-error skip|quarantine can set it aside. The bulk path sends such files here.
 */
export function unstorable(rec: RolloutRecord, at: SourcePosition): ImportError | null {
  // Checked without building a list: a trajectory has hundreds of steps.
  const check = (name: () => string, v: number | null | undefined, required = false): ImportError | null => {
    if (v === null || v === undefined) return null;
    // Only the step is required; an optional count that is not a number is stored as null.
    if (!Number.isFinite(v) ? !required : Math.trunc(v) >= INT32_MIN && Math.trunc(v) <= INT32_MAX) return null;
    return new ImportError(at.file, at.line ?? null, `${name()} is ${v}, outside the whole numbers the store holds (${INT32_MIN} to ${INT32_MAX})`, undefined);
  };
  const top = check(() => 'step', rec.step, true) ?? check(() => 'response tokens', rec.responseTokens) ?? check(() => 'turns', rec.numTurns);
  if (top) return top;
  const steps = rec.steps ?? [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const bad = check(() => `step ${i} exit code`, s.exitCode) ?? check(() => `step ${i} observation bytes`, s.observationBytes) ?? check(() => `step ${i} tokens`, s.tokens);
    if (bad) return bad;
  }
  return null;
}

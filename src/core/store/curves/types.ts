/**
 * Training curves: the scalars a trainer logs per step (entropy, KL, gradient norm, clip
 * ratios, scores), read from its console log, its metrics files or TensorBoard event files.
 * Every reader yields the same points, whatever the trainer wrote.
 */

/** One logged value. */
export interface CurvePoint {
  step: number;
  /** The trainer's own name (`actor/entropy`, `critic/score/mean`, …). */
  metric: string;
  /** NaN and ±Infinity are kept: an exploding gradient norm is information. */
  value: number;
  /** Seconds since the epoch, where the format records it. */
  wallTime: number | null;
}

/** Where a point or a bad record sits: a 1-based line, or a byte offset for binary files. */
export interface CurvePosition {
  line?: number;
  offset?: number;
  /** Byte offset just after the record: where a follower of a growing file resumes. */
  endOffset: number;
}

export type CurveItem = { points: CurvePoint[]; at: CurvePosition } | { bad: string; at: CurvePosition };

export type CurveFormat = 'verl-console' | 'verl-file' | 'tensorboard' | 'mlflow';

export interface CurveReadOptions {
  /** Byte offset to resume from (a complete record ends there), and the line number at it. */
  startOffset: number;
  startLine: number;
  /** Sees every byte read, in order (the caller hashes them). */
  onChunk?: (bytes: Buffer) => void;
}

export interface CurveReader {
  format: CurveFormat;
  description: string;
  /** Whether `file` is in this format: its path, then `head`, its first bytes as text. */
  matches(file: string, head: string): boolean;
  /**
   * Streams the file's points from `startOffset`. A malformed record is yielded as `bad`
   * (with its line or offset) and reading goes on; a record still being written (the last
   * one, incomplete) is left for the next read.
   */
  read(file: string, opts: CurveReadOptions): AsyncIterable<CurveItem>;
  /** The run a file names itself (an MLflow run's name), when the user gave none. */
  runName?(file: string): string | null;
}

import type { Split } from '../../model';
import type { ImporterItem } from '../rows';

export const FORMATS = ['verl', 'trl', 'skyrl', 'rllm', 'prime-rl', 'mini-swe-agent', 'swe-agent', 'jsonl'] as const;
export type FormatName = (typeof FORMATS)[number];

/** Declared field mapping for the generic JSONL importer (dotted paths into each record). */
export interface FieldMapping {
  prompt: string;
  response?: string;
  groundTruth?: string;
  reward?: string;
  correct?: string;
  promptId?: string;
  groupId?: string;
  step?: string;
  split?: string;
  dataSource?: string;
  /**
   * One record holding several rollouts of one prompt (e.g. GSM8K's four model solutions):
   * each entry names a sub-object, whose fields are read with `response` / `correct` / `reward`.
   */
  samples?: string[];
}

/** Rows of a columnar file (Parquet), streamed by the store's DuckDB. */
export interface TableReader {
  readParquet(file: string): AsyncIterable<Record<string, unknown>>;
}

export interface ReadOptions {
  /** Split when the path does not say (CLI `--split`). */
  split?: Split;
  /** Byte offset to resume a line-oriented file from (following a growing file). */
  startOffset?: number;
  /** 1-based line number at `startOffset`. */
  startLine?: number;
  mapping?: FieldMapping;
  tables: TableReader;
  /**
   * The file's bytes, when the store already read them (whole-document formats: it
   * hashes them for de-duplication, so the importer need not read the file again).
   */
  content?: Buffer;
  /** Line-oriented importers pass this to readJsonLines: every byte read, in order. */
  onChunk?: (bytes: Buffer) => void;
}

/**
 * A whole file read by DuckDB itself (its JSON reader is multi-threaded C++), for formats
 * whose records map column to column. `select` reads `file` and yields, per record:
 * ord (1-based record number), step, split, prompt, response, ground_truth, reward,
 * reward_components (JSON text), correct, extracted_answer, data_source, extra (JSON
 * text) and `bad` (true when the record is not of the expected shape). The store uses it
 * only for fresh, complete files and falls back to `read` when any record is bad, so
 * errors are always reported by `read`, with their lines.
 */
export interface BulkPlan {
  select: string;
}

export interface Importer {
  format: FormatName;
  description: string;
  /** Line-oriented files can be followed while a run appends to them. */
  followable: boolean;
  /**
   * Whether `file` is in this format: its path first (the trainer's dump layout), then
   * `head`, the first bytes of the file as text (may end mid-record).
   */
  matches(file: string, head: string): boolean;
  /**
   * Streams the file's records. A malformed record is yielded as a BadRecord (with its
   * line), never thrown, so `--on-error skip|quarantine` can go on; an unreadable file
   * throws an ImportError.
   */
  read(file: string, opts: ReadOptions): AsyncIterable<ImporterItem>;
  /** Optional fast path: see BulkPlan. `head` is the first bytes of the file. */
  bulk?(file: string, head: string, opts: { split?: Split }): BulkPlan | null;
}

import type { Split, TaskDomain } from '../../model';
import type { ImporterItem } from '../rows';

export const FORMATS = ['verl', 'trl', 'skyrl', 'rllm', 'prime-rl', 'verifiers', 'mini-swe-agent', 'swe-agent', 'jsonl'] as const;
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
  /** A SWE-bench run summary or report to take verdicts from (CLI `--verdicts`), instead of looking beside the files. */
  verdicts?: string;
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
 * Files read by DuckDB itself (its JSON reader is multi-threaded C++), for formats whose
 * records map column to column. The store reads many files of one `signature` in one
 * query: `read_json([...files], columns = <columns>) with ordinality`, with the per-file
 * values `file_step` and `file_split` beside each row, and selects
 * `projection`: step, split, prompt, response, ground_truth, reward, reward_components
 * (JSON text), correct, extracted_answer, data_source, extra (JSON text), bad (true when
 * the record is not of the expected shape). A file with a bad record, or whose records
 * do not match its lines one to one, is read again by `read`, which reports errors with
 * their lines; so the bulk path never decides what an error is. The projection is row by
 * row (scalar expressions; no join, subquery or aggregate): the streaming windows above it
 * number the records in file order.
 */
export interface BulkPlan {
  /** Files whose plans share a signature are read in one query. */
  signature: string;
  columns: string;
  projection: string;
  /** Per-file values the projection refers to as file_step and file_split. */
  fileStep: number;
  fileSplit: Split;
  /**
   * The top-level keys every record has, in this order (DuckDB's reader would silently drop
   * a key the column spec does not name, and give a missing one as null): a file where a
   * record's keys differ is streamed.
   */
  keys?: readonly string[];
  /**
   * Top-level keys whose values the projection stores as DuckDB's JSON text: a file where
   * one is not text, null or a list of flat chat messages is streamed (see ShapeCheck).
   */
  messages?: readonly string[];
  /** The one of `messages` that must be a single turn, and the keys whose numbers must read as JavaScript writes them (see ShapeCheck). */
  singleTurn?: string;
  jsonText?: readonly string[];
  /** Text that must not occur in one top-level key's string value: a file where it does is streamed (see ShapeCheck.markers). */
  markers?: { key: string; texts: readonly string[] };
  /** Columns of BULK_OPTIONAL_COLUMNS the projection selects too; the store gives the rest their defaults. */
  optional?: readonly BulkOptionalColumn[];
}

/**
 * Columns a bulk projection may select beside the required ones, with the value the store
 * gives them otherwise (prompt_id / group_id: null is derived from the prompt, as the
 * streaming path derives them).
 */
export const BULK_OPTIONAL_COLUMNS = {
  prompt_id: 'null::varchar',
  group_id: 'null::varchar',
  prompt_format: "'text'",
  response_format: "'text'",
  advantage: 'null::double',
  stop_reason: 'null::varchar',
  response_tokens: 'null::integer',
  num_turns: '1',
  errors: 'null::varchar',
  timing_ms: 'null::double',
  env_class: 'null::varchar',
} as const;
export type BulkOptionalColumn = keyof typeof BULK_OPTIONAL_COLUMNS;

export interface Importer {
  format: FormatName;
  description: string;
  /** The task domain of a file's rollouts, when the format says (SWE trajectories; a verifiers env). */
  domainOf?(file: string): TaskDomain | null;
  /** Line-oriented files can be followed while a run appends to them. */
  followable: boolean;
  /**
   * Whole JSON documents that `read` parses from their bytes alone (no table reader): a
   * large import parses them on worker threads (see documentWorkers.ts).
   */
  offThread?: boolean;
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
  /** Optional fast path: see BulkPlan. `head` is the first bytes of the file; null = stream it. */
  bulk?(file: string, head: string, opts: { split?: Split }): BulkPlan | null;
}

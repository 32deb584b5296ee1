import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBValue } from '@duckdb/node-api';
import type { Split, TaskDomain } from '../model';
import { loadDuckDB } from './duckdb';
import { discoverCurves, isLogName } from './curves';
import { importCurves, type CurveImportSummary } from './curves/import';
import { hashPrefix } from './hashing';
import { discover, readHead, type IgnoredFile } from './importers';
import { DuplicateKeyScan } from './importers/jsonLines';
import type { BulkPlan, FieldMapping, FormatName, Importer, TableReader } from './importers/types';
import { ImportError, isBad, type ImportedRecord, type RolloutRecord, type SourcePosition } from './rows';
import { DDL, NO_ANSWER_SQL, SCHEMA_VERSION } from './schema';
import { duckdbTableReader } from './tableReader';

export type OnError = 'fail' | 'skip' | 'quarantine';

export interface ImportOptions {
  /** Run the rollouts belong to (default: the name of the path given). */
  run?: string;
  version?: string | null;
  split?: Split;
  format?: FormatName;
  onError?: OnError;
  mapping?: FieldMapping;
  /** The runs' task domain, whatever the format (CLI `--domain`). */
  domain?: TaskDomain;
  /** The domain of runs whose format does not say (the harness manifest's). */
  fallbackDomain?: TaskDomain | null;
  /** A SWE-bench run summary or report holding the verdicts (see importers/sweVerdicts.ts). */
  verdicts?: string;
  /** Checked between records: an aborted import leaves the store as it was. */
  signal?: AbortSignal;
  onProgress?: (p: { file: string; rollouts: number }) => void;
  /** Let DuckDB read formats it can map column to column (default true; false forces streaming). */
  bulk?: boolean;
}

export interface FileImportResult {
  file: string;
  format: FormatName;
  run: string;
  /** imported: new rows; unchanged: nothing new (same content, or a live file with no new complete line). */
  status: 'imported' | 'unchanged';
  /** The file continued an earlier import of the same file (a live run appending). */
  resumed: boolean;
  /** Who parsed it: DuckDB's own reader (formats mapped column to column), or the importer's stream. */
  reader: 'duckdb' | 'stream';
  rollouts: number;
  steps: number;
  badRecords: number;
  importId?: number;
}

export interface ImportSummary {
  files: FileImportResult[];
  /** Files of the given folders not imported, each with the reason (also broken links, links to directories, FIFOs, devices). */
  ignored: IgnoredFile[];
  /** Training curves found among the paths (console logs, metrics files, event files). */
  curves?: CurveImportSummary;
  rollouts: number;
  steps: number;
  badRecords: number;
}

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
/** Rows appended between commits: bounds memory whatever the input size. */
const CHUNK_ROWS = 20_000;
const CHUNK_BYTES = 128 * 1024 * 1024;

/** Where a harness keeps its store: ignored by git, rebuilt from run outputs. */
export function defaultStorePath(harnessRoot: string): string {
  return path.join(harnessRoot, '.evotrainer', 'store.duckdb');
}

/**
 * One DuckDB instance per store file per process, shared by every RolloutStore open on it
 * (each with its own connection) and closed with the last one. Two instances on one file
 * in one process are not protected by DuckDB's file lock (it is per process) and can
 * corrupt the file — the editor opens the store from several views and commands at once.
 */
const instances = new Map<string, { ready: Promise<DuckDBInstance>; instance?: DuckDBInstance; refs: number; readOnly: boolean }>();

let memoryStores = 0;
const keyOf = (file: string) => (file === ':memory:' ? `:memory:${++memoryStores}` : path.resolve(file));

async function acquireInstance(file: string, readOnly: boolean): Promise<{ instance: DuckDBInstance; first: boolean; key: string }> {
  const key = keyOf(file);
  const shared = instances.get(key);
  if (shared) {
    if (shared.readOnly && !readOnly) throw new Error(`${file}: the rollout store is open read-only in this process (a hover or view reading it); retry in a moment`);
    shared.refs++;
    try {
      return { instance: await shared.ready, first: false, key };
    } catch (err) {
      shared.refs--;
      throw err;
    }
  }
  const { DuckDBInstance } = loadDuckDB();
  const ready = DuckDBInstance.create(file, { memory_limit: '1GB', threads: '2', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', ...(readOnly ? { access_mode: 'READ_ONLY' } : {}) }).catch((err: Error) => {
    instances.delete(key);
    const msg = err.message;
    if (/lock/i.test(msg)) throw new Error(`${file}: the rollout store is open in another process (${msg.split('\n')[0]}). Close it there, then retry.`);
    throw new Error(`${file}: cannot open the rollout store: ${msg.split('\n')[0]}`);
  });
  const entry: { ready: Promise<DuckDBInstance>; instance?: DuckDBInstance; refs: number; readOnly: boolean } = { ready, refs: 1, readOnly };
  instances.set(key, entry);
  entry.instance = await ready;
  return { instance: entry.instance, first: true, key };
}

function releaseInstance(key: string): void {
  const e = instances.get(key);
  if (!e) return;
  if (--e.refs > 0) return;
  instances.delete(key);
  if (e.instance) e.instance.closeSync();
  else void e.ready.then((i) => i.closeSync()).catch(() => undefined);
}

/**
 * The embedded rollout store (DuckDB). One writer at a time: DuckDB locks the file.
 */
export class RolloutStore {
  private tableReader: (TableReader & { close(): void }) | undefined;

  private constructor(
    readonly file: string,
    private readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
    /** Opened with `{ readOnly: true }`: derived views are then temporary (see ensureFeatures). */
    readonly readOnly = false,
    private readonly instanceKey = path.resolve(file),
  ) {}

  /**
   * Opens (creating) the store. `{ readOnly: true }` opens an existing store for reading
   * only (the editor's hovers): no migration, no sweep. Other readers may share it, but no
   * writer can open it meanwhile, so such a reader closes it as soon as it has read.
   */
  static async open(file: string, opts: { readOnly?: boolean } = {}): Promise<RolloutStore> {
    const readOnly = opts.readOnly === true;
    if (file !== ':memory:' && !readOnly) mkdirSync(path.dirname(file), { recursive: true });
    const { instance, first, key } = await acquireInstance(file, readOnly);
    let conn: DuckDBConnection;
    try {
      conn = await instance.connect();
    } catch (err) {
      releaseInstance(key);
      throw err;
    }
    const store = new RolloutStore(file, instance, conn, readOnly, key);
    // Migration and the sweep of dead imports run once per process and file: a second
    // store on a shared instance must not sweep rows another one is still importing.
    if (readOnly || !first) return store;
    await store.migrate();
    await store.sweepPending();
    return store;
  }

  private async migrate(): Promise<void> {
    for (const sql of DDL) await this.conn.run(sql);
    await this.conn.run(`insert into meta values ('schema_version', ?) on conflict do nothing`, [String(SCHEMA_VERSION)]);
  }

  /**
   * Removes what an import command that died midway (crash, kill, Ctrl-C) had appended:
   * its rows carry import ids above every recorded import.
   */
  private async sweepPending(): Promise<void> {
    const top = (await this.one<{ n: number }>(`select coalesce(max(id), 0) as n from imports`))!.n;
    for (const t of ['step_rows', 'rollout_rows', 'quarantine']) await this.conn.run(`delete from ${t} where import_id > ?`, [top]);
  }

  async all<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T[]> {
    const reader = await this.conn.runAndReadAll(sql, params);
    return reader.getRowObjectsJS().map(normalizeRow) as T[];
  }

  /**
   * Runs a query and yields its result one chunk (DuckDB's vector, 2048 rows) at a time as
   * columns of values, as the chunks come: for reads too large to hold whole, and for
   * consumers that start on the first rows while the rest is read. It runs on a connection
   * of its own, so other queries may run meanwhile (it sees the store's tables and views,
   * not this connection's temporary ones). Columns of plain types (numbers, strings,
   * booleans; BIGINT as bigint).
   */
  async *chunks(sql: string, params: DuckDBValue[] = []): AsyncGenerator<DuckDBValue[][]> {
    const conn = await this.instance.connect();
    try {
      const result = await conn.stream(sql, params);
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) yield chunk.getColumns();
    } finally {
      conn.closeSync();
    }
  }

  async one<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  private tables(): TableReader {
    this.tableReader ??= duckdbTableReader();
    return this.tableReader;
  }

  /**
   * Imports files and directories. The whole command lands or nothing does: rows are
   * appended in bounded chunks inside one transaction (DuckDB writes full row groups
   * straight to the file, so memory stays bounded), under fresh import ids that the views
   * show only once the imports table records them, in the same transaction. A crash
   * loses the uncommitted transaction; a failure rolls it back.
   */
  async import(paths: string[], opts: ImportOptions = {}): Promise<ImportSummary> {
    // Training curves (logs, event files) go to their own importer; a file named explicitly is not a rollout dump.
    const curves = discoverCurves(paths);
    const curveFiles = new Set(curves.map((c) => c.file));
    // A job log named explicitly, before its first step line, has nothing to import yet: ignored, not an error.
    const quietLogs = paths.filter((p) => !curveFiles.has(path.resolve(p)) && isLogName(p) && existsSync(p) && statSync(p).isFile());
    const { files, ignored } = await discover(paths.filter((p) => !curveFiles.has(path.resolve(p)) && !quietLogs.includes(p)), opts.format);
    const waiting = quietLogs.map((file) => ({ file, reason: "a log with no training-curve line yet (verl's `step:N - key:value`): import it again once the run has logged a step" }));
    const summary: ImportSummary = { files: [], ignored: [...waiting, ...ignored.filter((f) => !curveFiles.has(path.resolve(f.file)))], rollouts: 0, steps: 0, badRecords: 0 };
    const base = (await this.one<{ n: number }>(`select coalesce(max(id), 0) as n from imports`))!.n;
    const batch: Batch = {
      nextImportId: base + 1,
      nextRolloutId: (await this.one<{ n: number }>(`select coalesce(max(id), 0) + 1 as n from rollout_rows`))!.n,
      hashes: new Set((await this.all<{ h: string }>(`select run_id || ':' || content_hash as h from imports`)).map((r) => r.h)),
      previous: new Map(
        (await this.all<PreviousImport & { path: string; run_id: string }>(
          `select path, run_id, end_offset, end_line, content_hash, file_size, file_mtime_ms from imports qualify row_number() over (partition by path, run_id order by id desc) = 1`,
        )).map((r) => [`${r.run_id}\0${r.path}`, r]),
      ),
      records: [],
      runs: new Map(),
    };
    const seen = new Set<string>();
    const todo: { file: string; importer: Importer; run: string }[] = [];
    for (const f of files) {
      const file = path.resolve(f.file);
      if (seen.has(file)) continue;
      seen.add(file);
      const run = opts.run ?? defaultRunName(f.root);
      if (!batch.runs.has(run)) batch.runs.set(run, { framework: f.importer.format, source: path.resolve(f.root), domain: opts.domain ?? f.importer.domainOf?.(f.file) ?? opts.fallbackDomain ?? null });
      todo.push({ file, importer: f.importer, run });
    }
    const add = (r: FileImportResult) => {
      summary.files.push(r);
      summary.rollouts += r.rollouts;
      summary.steps += r.steps;
      summary.badRecords += r.badRecords;
    };
    const writer = new ChunkWriter(this.conn);
    let inTransaction = false;
    // A signal ends the import promptly wherever it is: a running DuckDB query is interrupted,
    // a file being read stops at its next chunk (see interrupted()).
    const interrupt = () => this.conn.interrupt();
    opts.signal?.addEventListener('abort', interrupt, { once: true });
    try {
      // The bulk path runs in autocommit (DuckDB then writes row groups in parallel as it
      // reads); its rows stay invisible until the imports are recorded below.
      const bulkable = (t: (typeof todo)[number]) => t.importer.bulk !== undefined && opts.bulk !== false && t.importer.followable;
      const { results, stream } = await this.importBulk(todo.filter(bulkable), opts, batch);
      results.forEach(add);
      const streamed = new Set(stream.map((t) => t.file));
      // The streaming path appends inside one transaction, which records every import.
      await this.conn.run('begin');
      inTransaction = true;
      await writer.open();
      for (const t of todo) {
        if (bulkable(t) && !streamed.has(t.file)) continue;
        add(await this.importFile(t.file, t.importer, t.run, opts, batch, writer));
      }
      summary.files.sort((a, b) => todo.findIndex((t) => t.file === a.file) - todo.findIndex((t) => t.file === b.file));
      await writer.close();
      await this.record(batch, opts);
      if (curves.length) summary.curves = await importCurves(this.conn, curves, { run: opts.run, version: opts.version, signal: opts.signal, defaultRun: defaultRunName });
      trace('recorded');
      await this.conn.run('commit');
      trace('committed');
      return summary;
    } catch (err) {
      await writer.abort();
      if (inTransaction) await this.conn.run('rollback');
      // What the bulk path wrote was committed row by row: remove it.
      for (const t of ['step_rows', 'rollout_rows', 'quarantine']) await this.conn.run(`delete from ${t} where import_id > ?`, [base]);
      if (opts.signal?.aborted && !(err instanceof ImportError)) throw interrupted(todo[0]?.file ?? paths[0] ?? '', null);
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', interrupt);
    }
  }

  /** Records the command's imports and runs (inside its transaction): this makes its rows visible. */
  private async record(batch: Batch, opts: ImportOptions): Promise<void> {
    if (!batch.records.length) return;
    // Columns derived from the text, for rows the importers streamed (the bulk path set them).
    const streamed = batch.records.filter((r) => r.reader === 'stream').map((r) => r.id);
    if (streamed.length) {
      // The final-answer check is for single-turn answers; trajectories submit patches.
      await this.conn.run(`update rollout_rows set response_chars = length(response), no_answer = case when num_turns <= 1 then ${NO_ANSWER_SQL} end where import_id in (${streamed.join(', ')})`);
    }
    // An appender: hundreds of files' records in one go, inside the transaction.
    const a = await this.conn.createAppender('imports');
    for (const r of batch.records) {
      a.appendInteger(r.id);
      a.appendVarchar(r.path);
      a.appendVarchar(r.format);
      a.appendVarchar(r.run);
      varchar(a, opts.version);
      a.appendVarchar('committed');
      a.appendVarchar(r.hash);
      a.appendBigInt(BigInt(r.startOffset));
      if (r.endOffset === null) a.appendNull();
      else a.appendBigInt(BigInt(r.endOffset));
      if (r.endLine === null) a.appendNull();
      else a.appendBigInt(BigInt(r.endLine));
      a.appendBigInt(BigInt(r.size));
      a.appendDouble(r.mtimeMs);
      a.appendBigInt(BigInt(r.rollouts));
      a.appendBigInt(BigInt(r.steps));
      a.appendBigInt(BigInt(r.badRecords));
      a.appendDefault();
      a.appendDefault();
      a.endRow();
    }
    a.closeSync();
    for (const [run, r] of batch.runs) {
      await this.conn.run(`insert into runs (id, version, framework, source, created_at, domain) values (?, ?, ?, ?, now(), ?) on conflict (id) do update set domain = coalesce(excluded.domain, runs.domain)`, [run, opts.version ?? null, r.framework, r.source, r.domain]);
    }
  }

  private async importFile(file: string, importer: Importer, run: string, opts: ImportOptions, batch: Batch, writer: ChunkWriter): Promise<FileImportResult> {
    const base = { file, format: importer.format, run, resumed: false, reader: 'stream' as const, rollouts: 0, steps: 0, badRecords: 0 };
    const { size, mtimeMs } = statSync(file);
    const previous = batch.previous.get(`${run}\0${file}`);
    // The same file, untouched since it was imported: nothing to read.
    if (previous && previous.file_size === size && previous.file_mtime_ms === mtimeMs) return { ...base, status: 'unchanged' };
    let content: Buffer | undefined;
    let startOffset = 0;
    let startLine = 1;
    // Hashes what is read, in the same pass: the content hash that de-duplicates imports.
    let hash = createHash('sha256');
    let hashed = 0;
    if (!importer.followable) {
      if (path.extname(file) === '.parquet') {
        for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) hash.update(chunk);
      } else {
        // Whole documents: read once, hash the bytes, hand them to the importer.
        content = readFileSync(file);
        hash.update(content);
      }
      hashed = size;
      const full = hash.copy().digest('hex');
      if (batch.hashes.has(`${run}:${full}`)) return { ...base, status: 'unchanged' };
    } else if (previous?.end_offset && size >= previous.end_offset) {
      // A live file: continue after the last complete line if what was read then is unchanged.
      const prefix = await hashPrefix(file, previous.end_offset);
      if (prefix.copy().digest('hex') === previous.content_hash) {
        startOffset = previous.end_offset;
        startLine = (previous.end_line ?? 0) + 1;
        hash = prefix;
        hashed = startOffset;
      }
    }
    const onChunk = importer.followable
      ? (bytes: Buffer) => {
          if (opts.signal?.aborted) throw interrupted(file, null);
          hash.update(bytes);
          hashed += bytes.length;
        }
      : undefined;
    const importId = batch.nextImportId;
    const groupCounts = new Map<string, number>();
    if (startOffset > 0) {
      const rows = await this.all<{ group_id: string; n: number }>(
        `select group_id, max(sample_index) + 1 as n from rollout_rows r join imports i on r.import_id = i.id where i.path = ? and i.run_id = ? group by group_id`,
        [file, run],
      );
      for (const r of rows) groupCounts.set(r.group_id, r.n);
    }
    let endOffset = startOffset;
    let endLine = startLine - 1;
    let rollouts = 0;
    let steps = 0;
    let badRecords = 0;
    let lastPrompt: string | null = null;
    let lastPromptHash = '';
    for await (const item of importer.read(file, { split: opts.split, startOffset, startLine, mapping: opts.mapping, verdicts: opts.verdicts, tables: this.tables(), content, onChunk })) {
      if (opts.signal?.aborted) throw interrupted(file, item.at.line ?? null);
      if (item.at.endOffset !== undefined) endOffset = item.at.endOffset;
      if (item.at.line !== undefined) endLine = item.at.line;
      const error = isBad(item) ? item.error : unstorable(item.record, item.at);
      if (error) {
        const policy = opts.onError ?? 'fail';
        if (policy === 'fail') throw error;
        badRecords++;
        if (policy === 'quarantine') writer.quarantine(importId, file, error);
        continue;
      }
      const rec = (item as ImportedRecord).record;
      // The step column holds whole numbers: the group id is made from the same one (the bulk path truncates too).
      rec.step = Math.trunc(rec.step);
      const promptText = typeof rec.prompt === 'string' ? rec.prompt : JSON.stringify(rec.prompt);
      // Samples of one prompt arrive together: hash each prompt once.
      if (promptText !== lastPrompt) {
        lastPrompt = promptText;
        lastPromptHash = promptHashOf(promptText);
      }
      const promptHash = lastPromptHash;
      // A prompt's samples from one data source: the same tasks evaluated two ways (e.g. an
      // "-honest" eval with the environment's shortcuts closed) are two groups, not one.
      const groupId = rec.groupId ?? `${rec.split}:${rec.step}:${promptHash}${rec.dataSource ? `:${rec.dataSource}` : ''}`;
      const sampleIndex = groupCounts.get(groupId) ?? 0;
      groupCounts.set(groupId, sampleIndex + 1);
      const rawRef = positionOf(item.at);
      await writer.append(rec, {
        id: batch.nextRolloutId++,
        importId,
        run,
        version: opts.version ?? null,
        framework: importer.format,
        promptText,
        promptId: rec.promptId ?? `p:${promptHash}`,
        groupId,
        sampleIndex,
        rawRef,
      }).catch((err: unknown) => {
        // Whatever DuckDB still refuses names the record; the appender is then unusable, so this ends the import.
        throw new ImportError(file, item.at.line ?? null, `the store could not hold this record (${(err as Error).message.split('\n')[0]})`);
      });
      rollouts++;
      steps += rec.steps?.length ?? 0;
      if (rollouts % 10_000 === 0) opts.onProgress?.({ file, rollouts });
    }
    if (rollouts === 0 && badRecords === 0) return { ...base, status: 'unchanged', resumed: startOffset > 0 };
    // The hash covers what was read; a half-written last line was read but not consumed.
    const consumed = !importer.followable || endOffset === hashed ? hash.digest('hex') : (await hashPrefix(file, endOffset)).digest('hex');
    if (batch.hashes.has(`${run}:${consumed}`)) {
      // A copy of something already imported under another name: drop what was appended.
      await writer.discard(importId);
      batch.nextRolloutId -= rollouts;
      return { ...base, status: 'unchanged' };
    }
    batch.nextImportId++;
    batch.hashes.add(`${run}:${consumed}`);
    batch.records.push({
      id: importId,
      path: file,
      format: importer.format,
      run,
      hash: consumed,
      startOffset,
      endOffset: importer.followable ? endOffset : null,
      endLine: importer.followable ? endLine : null,
      reader: 'stream',
      size,
      mtimeMs,
      rollouts,
      steps,
      badRecords,
    });
    return { ...base, status: 'imported', resumed: startOffset > 0, rollouts, steps, badRecords, importId };
  }

  /**
   * The fast path for formats DuckDB can read column to column (see BulkPlan): fresh,
   * complete files of one shape go through one DuckDB query that inserts them with the
   * ids, groups, sample indices and record references the streaming path would give.
   * While DuckDB parses on its threads, this thread hashes each file and counts its lines.
   * Files with a bad record, or whose records are not their lines one to one, are taken
   * out again and returned, to be streamed (which reports errors with their lines).
   */
  private async importBulk(candidates: { file: string; importer: Importer; run: string }[], opts: ImportOptions, batch: Batch): Promise<{ results: FileImportResult[]; stream: typeof candidates }> {
    const results: FileImportResult[] = [];
    const stream: typeof candidates = [];
    const groups = new Map<string, { plan: BulkPlan; files: { file: string; importer: Importer; run: string; size: number; mtimeMs: number; plan: BulkPlan }[] }>();
    for (const c of candidates) {
      const { size, mtimeMs } = statSync(c.file);
      const previous = batch.previous.get(`${c.run}\0${c.file}`);
      if (previous && previous.file_size === size && previous.file_mtime_ms === mtimeMs) {
        results.push({ file: c.file, format: c.importer.format, run: c.run, status: 'unchanged', resumed: false, reader: 'duckdb', rollouts: 0, steps: 0, badRecords: 0 });
        continue;
      }
      const plan = previous ? null : c.importer.bulk!(c.file, readHead(c.file, 64 * 1024), { split: opts.split });
      if (!plan) {
        stream.push(c);
        continue;
      }
      const key = `${c.importer.format}\u0001${c.run}\u0001${plan.signature}`;
      const g = groups.get(key) ?? { plan, files: [] };
      g.files.push({ ...c, size, mtimeMs, plan });
      groups.set(key, g);
    }
    for (const { plan, files } of groups.values()) {
      const run = files[0]!.run;
      const format = files[0]!.importer.format;
      const baseId = batch.nextRolloutId;
      const firstImport = batch.nextImportId;
      // Record numbers are line numbers when each file's records are its lines, which the
      // counts below verify; offsets place each file in the query's running ordinality.
      const meta: { file: string; importId: number; offset: number; lines: number; hash: string; endsWithNewline: boolean; duplicateKeys: boolean; size: number; mtimeMs: number; plan: BulkPlan }[] = [];
      // DuckDB parses and writes on its threads while this thread hashes each file and
      // counts its lines; record numbers become line numbers after the checks below.
      meta.push(...files.map((f, i) => ({ file: f.file, importId: firstImport + i, offset: 0, lines: 0, hash: '', endsWithNewline: false, duplicateKeys: false, size: f.size, mtimeMs: f.mtimeMs, plan: f.plan })));
      const values = meta.map((m) => `(${sqlLiteral(m.file)}, ${m.importId}, ${m.plan.fileStep}, ${sqlLiteral(m.plan.fileSplit)})`).join(', ');
      const list = `[${files.map((f) => sqlLiteral(f.file)).join(', ')}]`;
      // Bad records are inserted with sample_index -1 so that the checks below see them;
      // their files are then taken out whole.
      const inserting = this.conn.run(
        `insert into rollout_rows
         select (${baseId} + ordinality - 1)::bigint, import_id, $1, $2, $3, step, split,
                'p:' || left(md5(coalesce(prompt, '')), 16),
                split || ':' || step || ':' || left(md5(coalesce(prompt, '')), 16) || coalesce(':' || data_source, ''),
                case when bad then -1 else 0 end,
                prompt, 'text', response, 'text', ground_truth, reward, reward_components, correct, extracted_answer,
                null, null, null, 1, null, null, data_source, null, extra, filename,
                length(response), ${NO_ANSWER_SQL}
         from (select ordinality, filename, import_id, ${plan.projection}
               from read_json(${list}, format = 'newline_delimited', filename = true, columns = ${plan.columns}, ignore_errors = true) with ordinality
               join (values ${values}) v(fname, import_id, file_step, file_split) on filename = v.fname)`,
        [run, opts.version ?? null, format],
      );
      inserting.catch(() => undefined); // awaited below
      let total = 0;
      for (const m of meta) {
        const r = await hashAndCount(m.file, opts.signal);
        Object.assign(m, { hash: r.hash, lines: r.lines, endsWithNewline: r.last === 0x0a, duplicateKeys: r.duplicateKeys });
        total += r.lines;
      }
      trace(`hashed ${files.length} file(s)`);
      const last = firstImport + files.length - 1;
      const failed = await inserting.then(
        () => false,
        () => true,
      );
      if (opts.signal?.aborted) throw interrupted(files[0]!.file, null);
      if (failed) {
        // DuckDB refused a value somewhere in these files (a number out of range, a line over
        // its object size): stream them all, which names each bad record with its line.
        trace('DuckDB could not read the files: streaming them');
        await this.conn.run(`delete from rollout_rows where import_id between ${firstImport} and ${last}`);
        stream.push(...files);
        continue;
      }
      trace('inserted (DuckDB read the files)');
      const counts = new Map(
        (await this.all<{ import_id: number; n: number; lo: number; hi: number; bad: number }>(
          `select import_id, count(*) as n, min(id) as lo, max(id) as hi, count(*) filter (where sample_index = -1) as bad from rollout_rows where import_id between ? and ? group by 1`,
          [firstImport, last],
        )).map((r) => [r.import_id, r]),
      );
      batch.nextRolloutId = Math.max(batch.nextRolloutId, ...[...counts.values()].map((c) => c.hi + 1), baseId + total);
      batch.nextImportId += files.length;
      // A file is good when it has no bad record, ends with a newline, names no key twice in
      // a record (DuckDB would keep the first value, JSON the last), and its records are
      // exactly its lines, read in one contiguous run (so record k is line k).
      const good: typeof meta = [];
      for (const m of meta) {
        const c = counts.get(m.importId);
        const ok = m.endsWithNewline && !m.duplicateKeys && m.lines > 0 && c !== undefined && c.bad === 0 && c.n === m.lines && c.hi - c.lo + 1 === c.n;
        if (ok && !batch.hashes.has(`${run}:${m.hash}`)) good.push(m);
        else if (ok) results.push({ file: m.file, format, run, status: 'unchanged', resumed: false, reader: 'duckdb', rollouts: 0, steps: 0, badRecords: 0 });
        else stream.push(files.find((f) => f.file === m.file)!);
      }
      const goodIds = good.map((m) => m.importId);
      trace('checked');
      await this.conn.run(`delete from rollout_rows where import_id between ${firstImport} and ${last}${goodIds.length ? ` and import_id not in (${goodIds.join(', ')})` : ''}`);
      if (goodIds.length) {
        // Sample indices in file order within each group, as the streaming path counts them;
        // record references as file:line.
        await this.conn.run(
          `update rollout_rows set sample_index = s.idx, raw_ref = raw_ref || ':' || (rollout_rows.id - s.lo + 1)
           from (select id, (row_number() over (partition by import_id, group_id order by id) - 1)::integer as idx,
                        min(id) over (partition by import_id) as lo
                 from rollout_rows where import_id in (${goodIds.join(', ')})) s
           where rollout_rows.id = s.id`,
        );
        trace('sample indices');
      }
      for (const m of good) {
        batch.hashes.add(`${run}:${m.hash}`);
        batch.records.push({ id: m.importId, path: m.file, format, run, hash: m.hash, startOffset: 0, endOffset: m.size, endLine: m.lines, reader: 'duckdb', size: m.size, mtimeMs: m.mtimeMs, rollouts: m.lines, steps: 0, badRecords: 0 });
        results.push({ file: m.file, format, run, status: 'imported', resumed: false, reader: 'duckdb', rollouts: m.lines, steps: 0, badRecords: 0, importId: m.importId });
      }
    }
    return { results, stream };
  }

  async listRollouts(q: ListQuery = {}): Promise<RolloutSummary[]> {
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
    return this.all<RolloutSummary>(
      `select id, run_id, version, framework, step, split, prompt_id, group_id, sample_index, reward, correct, num_turns, stop_reason, response_tokens, raw_ref,
              left(prompt, 120) as prompt_preview
       from rollouts ${where.length ? `where ${where.join(' and ')}` : ''}
       order by ${sortKey} ${dir} nulls last, id asc limit ${limit} offset ${offset}`,
      params,
    );
  }

  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  private preparedQueue: Promise<unknown> = Promise.resolve();

  /**
   * Runs a statement prepared once per store (point lookups: planning dominates their
   * cost). A prepared statement holds one set of parameters, so calls take turns.
   */
  private preparedAll<T>(sql: string, params: DuckDBValue[]): Promise<T[]> {
    const next = this.preparedQueue.then(async () => {
      let stmt = this.prepared.get(sql);
      if (!stmt) {
        stmt = await this.conn.prepare(sql);
        this.prepared.set(sql, stmt);
      }
      stmt.bind(params);
      return (await stmt.runAndReadAll()).getRowObjectsJS().map(normalizeRow) as T[];
    });
    this.preparedQueue = next.catch(() => undefined);
    return next;
  }

  async getRollout(id: number): Promise<{ rollout: RolloutRow; steps: StepRow[] } | null> {
    const [rollout] = await this.preparedAll<RolloutRow>(`select * from rollouts where id = $1`, [id]);
    if (!rollout) return null;
    for (const k of ['reward_components', 'errors', 'extra'] as const) {
      const v = rollout[k] as unknown;
      if (typeof v === 'string') (rollout as unknown as Record<string, unknown>)[k] = JSON.parse(v);
    }
    const steps = await this.preparedAll<StepRow>(`select * from steps where rollout_id = $1 order by turn`, [id]);
    return { rollout, steps };
  }

  async counts(): Promise<{ runs: number; rollouts: number; steps: number; groups: number; imports: number; quarantined: number }> {
    const r = await this.one<Record<string, number>>(
      `select (select count(distinct run_id) from rollouts) as runs, (select count(*) from rollouts) as rollouts, (select count(*) from steps) as steps,
              (select count(distinct (run_id, group_id)) from rollouts) as groups, (select count(*) from imports) as imports,
              (select count(*) from quarantine q where q.import_id in (select id from imports)) as quarantined`,
    );
    return r as { runs: number; rollouts: number; steps: number; groups: number; imports: number; quarantined: number };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stmt of this.prepared.values()) stmt.destroySync();
    this.prepared.clear();
    this.tableReader?.close();
    this.conn.closeSync();
    releaseInstance(this.instanceKey);
  }

  private closed = false;
}

interface PreviousImport {
  end_offset: number | null;
  end_line: number | null;
  content_hash: string;
  file_size: number | null;
  file_mtime_ms: number | null;
}

interface Batch {
  nextImportId: number;
  nextRolloutId: number;
  /** `run:content_hash` of everything imported: the same bytes never land twice in a run. */
  hashes: Set<string>;
  /** The last import of each file (run \0 path): where a live file stopped, and its size and mtime then. */
  previous: Map<string, PreviousImport>;
  records: {
    id: number;
    path: string;
    format: string;
    run: string;
    hash: string;
    startOffset: number;
    endOffset: number | null;
    endLine: number | null;
    reader: 'duckdb' | 'stream';
    size: number;
    mtimeMs: number;
    rollouts: number;
    steps: number;
    badRecords: number;
  }[];
  runs: Map<string, { framework: string; source: string; domain: TaskDomain | null }>;
}

interface RowContext {
  id: number;
  importId: number;
  run: string;
  version: string | null;
  framework: string;
  promptText: string;
  promptId: string;
  groupId: string;
  sampleIndex: number;
  rawRef: string;
}

/** Appends rows through DuckDB appenders, flushing in bounded chunks. */
class ChunkWriter {
  private rollouts: DuckDBAppender | undefined;
  private steps: DuckDBAppender | undefined;
  private quarantined: DuckDBAppender | undefined;
  private rows = 0;
  private bytes = 0;

  constructor(private readonly conn: DuckDBConnection) {}

  async open(): Promise<void> {
    this.rollouts = await this.conn.createAppender('rollout_rows');
    this.steps = await this.conn.createAppender('step_rows');
    this.quarantined = await this.conn.createAppender('quarantine');
  }

  quarantine(importId: number, file: string, error: ImportError): void {
    const q = this.quarantined!;
    q.appendInteger(importId);
    q.appendVarchar(file);
    if (error.line === null) q.appendNull();
    else q.appendBigInt(BigInt(error.line));
    q.appendVarchar(error.reason);
    varchar(q, error.raw ?? null);
    q.endRow();
  }

  async append(rec: RolloutRecord, c: RowContext): Promise<void> {
    const a = this.rollouts!;
    const response = typeof rec.response === 'string' ? rec.response : JSON.stringify(rec.response);
    a.appendBigInt(BigInt(c.id));
    a.appendInteger(c.importId);
    a.appendVarchar(c.run);
    varchar(a, c.version);
    a.appendVarchar(c.framework);
    a.appendInteger(Math.trunc(rec.step));
    a.appendVarchar(rec.split);
    a.appendVarchar(c.promptId);
    a.appendVarchar(c.groupId);
    a.appendInteger(c.sampleIndex);
    a.appendVarchar(c.promptText);
    a.appendVarchar(typeof rec.prompt === 'string' ? 'text' : 'messages');
    a.appendVarchar(response);
    a.appendVarchar(typeof rec.response === 'string' ? 'text' : 'turns');
    varchar(a, rec.groundTruth);
    double(a, rec.reward);
    json(a, rec.rewardComponents && Object.keys(rec.rewardComponents).length ? rec.rewardComponents : null);
    if (rec.correct === null || rec.correct === undefined) a.appendNull();
    else a.appendBoolean(rec.correct);
    varchar(a, rec.extractedAnswer);
    double(a, rec.advantage);
    varchar(a, rec.stopReason);
    integer(a, rec.responseTokens);
    integer(a, rec.numTurns ?? (rec.steps ? rec.steps.filter((s) => s.role === 'assistant').length : 1));
    json(a, rec.errors?.length ? rec.errors : null);
    double(a, rec.timingMs);
    varchar(a, rec.dataSource);
    varchar(a, rec.envClass);
    json(a, rec.extra && Object.keys(rec.extra).length ? rec.extra : null);
    a.appendVarchar(c.rawRef);
    a.appendNull(); // response_chars and no_answer: computed by DuckDB when the import is recorded
    a.appendNull();
    a.endRow();
    this.bytes += c.promptText.length + response.length;
    if (rec.steps) {
      const s = this.steps!;
      rec.steps.forEach((st, turn) => {
        s.appendBigInt(BigInt(c.id));
        s.appendInteger(c.importId);
        s.appendInteger(turn);
        s.appendVarchar(st.role);
        s.appendVarchar(st.actionKind);
        varchar(s, st.command);
        integer(s, st.exitCode);
        integer(s, st.observationBytes);
        s.appendBoolean(st.formatError);
        s.appendBoolean(st.timeout);
        s.appendBoolean(st.truncated);
        integer(s, st.tokens);
        s.endRow();
        this.bytes += st.command?.length ?? 0;
      });
    }
    if (++this.rows >= CHUNK_ROWS || this.bytes >= CHUNK_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    await this.close();
    this.rows = 0;
    this.bytes = 0;
    await this.open();
  }

  async close(): Promise<void> {
    this.rollouts?.closeSync();
    this.steps?.closeSync();
    this.quarantined?.closeSync();
    this.rollouts = this.steps = this.quarantined = undefined;
  }

  /** Drops what one file appended (it turned out to duplicate an earlier import). */
  async discard(importId: number): Promise<void> {
    await this.flush();
    for (const t of ['step_rows', 'rollout_rows', 'quarantine']) await this.conn.run(`delete from ${t} where import_id = ?`, [importId]);
  }

  async abort(): Promise<void> {
    try {
      await this.close();
    } catch {
      // the rows are discarded with the import anyway
    }
  }
}

function varchar(a: DuckDBAppender, v: string | null | undefined) {
  if (v === null || v === undefined) a.appendNull();
  else a.appendVarchar(v);
}
function double(a: DuckDBAppender, v: number | null | undefined) {
  if (v === null || v === undefined || !Number.isFinite(v)) a.appendNull();
  else a.appendDouble(v);
}
function integer(a: DuckDBAppender, v: number | null | undefined) {
  if (v === null || v === undefined || !Number.isFinite(v)) a.appendNull();
  else a.appendInteger(Math.trunc(v));
}
function json(a: DuckDBAppender, v: unknown) {
  if (v === null || v === undefined) a.appendNull();
  else a.appendVarchar(JSON.stringify(v));
}

/** EVOTRAINER_TRACE=1 prints how long each phase of an import takes (stderr). */
const TRACE = process.env.EVOTRAINER_TRACE === '1';
let traceLast = performance.now();
function trace(what: string): void {
  if (!TRACE) return;
  const now = performance.now();
  process.stderr.write(`[store] ${what} ${(now - traceLast).toFixed(0)} ms\n`);
  traceLast = now;
}

/** The prompt part of derived group ids: md5, so DuckDB's md5() gives the same ids on the bulk path. */
function promptHashOf(s: string): string {
  return createHash('md5').update(s).digest('hex').slice(0, 16);
}

/** The run name a path implies: `…/my-run/rollout_data/12.jsonl` given as `…/my-run` → `my-run`. */
function defaultRunName(root: string): string {
  const base = path.basename(path.resolve(root)).replace(/\.(jsonl|json|parquet|traj)$/, '');
  return base || 'default';
}

function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * sha256 of a file, its newline count, its last byte and whether a record names a key
 * twice, in one pass (stopped by `signal`).
 */
async function hashAndCount(file: string, signal?: AbortSignal): Promise<{ hash: string; lines: number; last: number; duplicateKeys: boolean }> {
  const hash = createHash('sha256');
  const keys = new DuplicateKeyScan();
  let lines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    if (signal?.aborted) break; // the caller sees the signal and stops
    hash.update(chunk);
    keys.feed(chunk);
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    if (chunk.length) last = chunk[chunk.length - 1]!;
  }
  return { hash: hash.digest('hex'), lines, last, duplicateKeys: keys.found };
}


function interrupted(file: string, line: number | null): ImportError {
  return new ImportError(file, line, 'the import was interrupted; nothing was recorded');
}

/** How a stored row names its source: file:line, or file#record for documents of many records. */
function positionOf(at: SourcePosition): string {
  return at.line !== undefined ? `${at.file}:${at.line}` : `${at.file}#${at.record ?? 1}`;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * A value an importer accepted that the store's integer columns cannot hold (a step of
 * 3e9, a token count past 2^31): a bad record with its line, like a malformed one, so
 * that --on-error skip|quarantine can set it aside. The bulk path sends such files here.
 */
function unstorable(rec: RolloutRecord, at: SourcePosition): ImportError | null {
  const ints: [string, number | null | undefined][] = [
    ['step', rec.step],
    ['response tokens', rec.responseTokens],
    ['turns', rec.numTurns],
    ...(rec.steps ?? []).flatMap((s, i): [string, number | null | undefined][] => [
      [`step ${i} exit code`, s.exitCode],
      [`step ${i} observation bytes`, s.observationBytes],
      [`step ${i} tokens`, s.tokens],
    ]),
  ];
  for (const [name, v] of ints) {
    if (v === null || v === undefined) continue;
    // Only the step is required; an optional count that is not a number is stored as null.
    if (!Number.isFinite(v) ? name === 'step' : Math.trunc(v) < INT32_MIN || Math.trunc(v) > INT32_MAX) {
      return new ImportError(at.file, at.line ?? null, `${name} is ${v}, outside the whole numbers the store holds (${INT32_MIN} to ${INT32_MAX})`, undefined);
    }
  }
  return null;
}

/** DuckDB hands back BIGINT as bigint; the store's numbers all fit in a double. */
function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) if (typeof v === 'bigint') row[k] = Number(v);
  return row;
}

/**
 * Imports into the rollout store: files and folders of any known format, through DuckDB's
 * own reader where a format maps column to column, streamed otherwise; a whole command
 * lands or nothing does.
 */
import { createHash, webcrypto } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBListType, DuckDBValue } from '@duckdb/node-api';
import { loadDuckDB } from './duckdb';
import type { Split, TaskDomain } from '../model';
import { discoverCurves, isLogName } from './curves';
import { ChunkRows, type ChunkValue } from './chunkRows';
import { isEncoded, recordText, type EncodedText, type RecordText } from './documentText';
import { defaultDocumentWorkers, DocumentWorkers, type ParsedDocument, type PreparedItem } from './documentWorkers';
import { STEP_COLUMNS_TYPE, type StepRows } from './documentWorker';
import { importCurves, type CurveImportSummary } from './curves/import';
import { hashPrefix } from './hashing';
import { discover, readJsonlHead, type IgnoredFile } from './importers';
import { documentTooLarge, isTooLarge, maxDocumentBytes } from './importers/documentSize';
import { documentBytes, isCompressed, readDocument, readDocumentSync, uncompressedName } from './compressed';
import { DuplicateKeyScan, type ShapeCheck } from './importers/jsonLines';
import { BULK_OPTIONAL_COLUMNS, type BulkOptionalColumn, type BulkPlan, type FieldMapping, type FormatName, type Importer, type TableReader } from './importers/types';
import { ROW_GROUP_ROWS, type StoreDb } from './instances';
import { ImportError, int, isBad, unstorable, type ImportedRecord, type RolloutRecord, type SourcePosition } from './rows';
import { IMPORT_TABLES, NO_ANSWER_SQL } from './schema';
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
  /**
   * Worker threads that parse whole documents (trajectories) while this thread appends:
   * 0 parses them here; a number makes that many workers parse every one; by default a
   * large import starts one per other core, which take files once they have started.
   */
  workers?: number;
  /** A file read whole (a trajectory, a JSON document) over this many bytes is refused before it is read (default: importers/documentSize.ts). */
  maxDocumentBytes?: number;
  /**
   * The rows each of the bulk path's two insert lanes must be expected to hold before a
   * group of files is split between them (default: LANE_MIN_ROWS; tests lower it).
   */
  bulkLaneRows?: number;
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
  /** Streamed from records a document worker parsed (see documentWorkers.ts). */
  worker?: true;
  rollouts: number;
  steps: number;
  badRecords: number;
  importId?: number;
  /** Why the whole file was set aside (--on-error skip|quarantine), e.g. over the size limit. */
  setAside?: string;
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
  /** What the user should know about how the files were read (DuckDB could not read some column by column, …). */
  notes?: string[];
}

/** Rows appended between commits: bounds memory whatever the input size. */
const CHUNK_ROWS = 20_000;
const CHUNK_BYTES = 128 * 1024 * 1024;
/** Text the appenders hold, of rows workers prepared, before they write it to the table (see ChunkWriter.write). */
const WRITE_BYTES = 8 * 1024 * 1024;
/**
 * DuckDB's buffer pool while the bulk path inserts (the store's usual limit is 1 GB): the
 * row groups its lanes build and write stay under this (what does not fit goes to its
 * temporary files), so that the importing process, Node's heap and DuckDB's allocations
 * outside the pool included, peaks under 1 GB of RSS with two lanes at work (815-890 MB
 * at 1M prime-rl rollouts of 7 KB). Under 480 MB those lanes spilled and read back what
 * they built (15% more CPU).
 */
const BULK_MEMORY_LIMIT_MB = 600;
/**
 * The pool for lines over LONG_LINE_BYTES on average: what DuckDB holds outside it grows
 * with the lines (its JSON reader keeps whole lines), some 400 MB at 40-100 KB lines,
 * where 600 MB of pool peaked at 960-1015 MB of RSS (400 MB: 680 MB, and no slower).
 */
const BULK_MEMORY_LIMIT_LONG_LINES_MB = 400;
const LONG_LINE_BYTES = 24 * 1024;

/**
 * What a DuckDB thread may keep of the memory it freed, while the bulk path inserts
 * (default 128 MB a thread): each insert lane's thread would hold that beside the pool.
 */
const BULK_ALLOCATOR_FLUSH = '8MB';
/**
 * Row groups an insert statement builds before it writes them to the file (DuckDB's
 * default is 5): each lane held five row groups of rollout text, over 200 MB, which spilled
 * to DuckDB's temporary files under the bulk memory limit and were read back (a prime-rl import
 * of 1M rollouts took 15% more CPU). With one, a lane's rows in memory stay small.
 */
const BULK_WRITE_BUFFER_ROW_GROUPS = 1;
/**
 * The rows a bulk insert lane must be expected to hold: DuckDB moves a statement's row
 * groups, written as it inserted, into a table that is not empty only when they make a
 * whole row group (ROW_GROUP_ROWS); fewer rows it writes again, through its log. A
 * quarter more covers the estimate's error (see estimatedLines).
 */
const LANE_MIN_ROWS = ROW_GROUP_ROWS * 1.25;

/** The importer of one store: its methods run on the store's connection. */
export class Ingest {
  private tableReader: (TableReader & { close(): void }) | undefined;

  constructor(private readonly db: StoreDb) {}

  private get conn(): DuckDBConnection {
    return this.db.conn;
  }

  private all<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T[]> {
    return this.db.all<T>(sql, params);
  }

  private one<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T | undefined> {
    return this.db.one<T>(sql, params);
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
    trace(`discovered ${files.length} file(s)`);
    const waiting = quietLogs.map((file) => ({ file, reason: "a log with no training-curve line yet (verl's `step:N - key:value`): import it again once the run has logged a step" }));
    const summary: ImportSummary = { files: [], ignored: [...waiting, ...ignored.filter((f) => !curveFiles.has(path.resolve(f.file)))], rollouts: 0, steps: 0, badRecords: 0 };
    const base = (await this.one<{ n: number }>(`select coalesce(max(id), 0) as n from imports`))!.n;
    const batch: Batch = {
      maxDocumentBytes: maxDocumentBytes(opts.maxDocumentBytes),
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
    let workers: DocumentWorkers | undefined;
    let inTransaction = false;
    // A signal ends the import promptly wherever it is: a running DuckDB query is interrupted,
    // a file being read stops at its next chunk (see interrupted()).
    const interrupt = () => this.conn.interrupt();
    opts.signal?.addEventListener('abort', interrupt, { once: true });
    try {
      // The bulk path runs in autocommit (DuckDB then writes row groups in parallel as it
      // reads); its rows stay invisible until the imports are recorded below.
      // (DuckDB would read a compressed file itself, but the plan's hashing, line count and key
      // scan would then decompress it again in JS: no faster than streaming it, measured)
      const bulkable = (t: (typeof todo)[number]) => t.importer.bulk !== undefined && opts.bulk !== false && t.importer.followable && !isCompressed(t.file);
      const { results, stream, notes } = await this.importBulk(todo.filter(bulkable), opts, batch);
      results.forEach(add);
      if (notes.length) summary.notes = notes;
      const streamed = new Set(stream.map((t) => t.file));
      // The streaming path appends inside one transaction, which records every import.
      await this.conn.run('begin');
      inTransaction = true;
      await writer.open();
      const streaming = todo.filter((t) => !bulkable(t) || streamed.has(t.file));
      // Whole documents (trajectories) are read and hashed a few files ahead, on libuv's
      // threads, while this thread parses and appends the current one. In a large import,
      // worker threads parse them (see documentWorkers.ts) while this thread appends.
      // Whether each file is read ahead, asked once per file (a stat each: the loop below asks again for every file in its window).
      const known = new Map<string, boolean>();
      const readAhead = (t: (typeof streaming)[number]) => {
        let v = known.get(t.file);
        if (v === undefined) known.set(t.file, (v = readsAhead(t, batch)));
        return v;
      };
      const offThread = streaming.filter((t) => t.importer.offThread && readAhead(t));
      const count = opts.workers ?? (offThread.length >= WORKERS_MIN_FILES ? defaultDocumentWorkers() : 0);
      workers = offThread.length ? DocumentWorkers.acquire(count) : undefined;
      const window = workers ? PARSE_AHEAD : READ_AHEAD;
      const ahead = new Map<string, Promise<ParsedDocument>>();
      const parseOpts = { split: opts.split, verdicts: opts.verdicts, maxBytes: batch.maxDocumentBytes };
      // Given a number of workers, they parse every document; by default this thread parses
      // the files whose turn comes before a worker has started.
      const share = opts.workers === undefined;
      for (let i = 0; i < streaming.length; i++) {
        const t = streaming[i]!;
        const next = streaming.slice(i, i + window).filter((n) => !ahead.has(n.file) && readAhead(n));
        for (const n of next) {
          if (!workers || !n.importer.offThread) {
            ahead.set(n.file, readWholeDocument(n.file, batch.maxDocumentBytes));
            continue;
          }
          const parsed = workers.parse(n.file, n.importer.format, parseOpts, !share);
          if (parsed) ahead.set(n.file, parsed);
        }
        if (share && workers && t.importer.offThread && !ahead.has(t.file) && readAhead(t)) ahead.set(t.file, DocumentWorkers.parseHere(t.file, t.importer.format, parseOpts));
        add(await this.importFile(t.file, t.importer, t.run, opts, batch, writer, ahead.get(t.file)));
        ahead.delete(t.file);
      }
      trace(`streamed ${streaming.length} file(s) (${summary.files.filter((f) => f.worker).length} parsed by workers)`);
      const order = new Map(todo.map((t, i) => [t.file, i]));
      summary.files.sort((a, b) => order.get(a.file)! - order.get(b.file)!);
      await writer.close();
      trace('appended');
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
      for (const t of IMPORT_TABLES) await this.conn.run(`delete from ${t} where import_id > ?`, [base]);
      if (opts.signal?.aborted && !(err instanceof ImportError)) throw interrupted(todo[0]?.file ?? paths[0] ?? '', null);
      throw err;
    } finally {
      opts.signal?.removeEventListener('abort', interrupt);
      workers?.release();
    }
  }

  /**
   * A file read whole that is over the size limit: the import fails on it, or with
   * --on-error skip|quarantine it is set aside as a malformed document is (counted, and kept
   * in the quarantine table). It is recorded under a marker rather than a content hash (its
   * bytes are never read): the same file under the same limit is not set aside twice, and
   * an import under a higher limit reads it.
   */
  private setAsideTooLarge(error: ImportError, base: Omit<FileImportResult, 'status'>, run: string, size: number, mtimeMs: number, opts: ImportOptions, batch: Batch, writer: ChunkWriter): FileImportResult {
    const policy = opts.onError ?? 'fail';
    if (policy === 'fail') throw error;
    // Unique to the file (its bytes, unread, cannot tell two files apart) and to the limit it was over.
    const marker = `${OVER_LIMIT}${batch.maxDocumentBytes}:${size}:${mtimeMs}:${base.file}`;
    if (batch.hashes.has(`${run}:${marker}`)) return { ...base, status: 'unchanged' };
    const importId = batch.nextImportId++;
    if (policy === 'quarantine') writer.quarantine(importId, base.file, error);
    batch.hashes.add(`${run}:${marker}`);
    batch.records.push({ id: importId, path: base.file, format: base.format, run, hash: marker, startOffset: 0, endOffset: null, endLine: null, reader: 'stream', size, mtimeMs, rollouts: 0, steps: 0, badRecords: 1 });
    return { ...base, status: 'imported', badRecords: 1, importId, setAside: error.reason };
  }

  /** Records the command's imports and runs (inside its transaction): this makes its rows visible. */
  private async record(batch: Batch, opts: ImportOptions): Promise<void> {
    if (!batch.records.length) return;
    // The no-answer check, for rows the importers streamed (the bulk path set it): it is for
    // single-turn answers (trajectories submit patches, their rows keep null).
    const streamed = batch.records.filter((r) => r.reader === 'stream').map((r) => r.id);
    if (streamed.length) {
      await this.conn.run(`update rollout_rows set no_answer = ${NO_ANSWER_SQL} where import_id in (${streamed.join(', ')}) and num_turns <= 1`);
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

  private async importFile(file: string, importer: Importer, run: string, opts: ImportOptions, batch: Batch, writer: ChunkWriter, document?: Promise<ParsedDocument>): Promise<FileImportResult> {
    const base = { file, format: importer.format, run, resumed: false, reader: 'stream' as const, rollouts: 0, steps: 0, badRecords: 0 };
    const { size, mtimeMs } = statSync(file);
    const previous = batch.previous.get(`${run}\0${file}`);
    // The same file, untouched since it was imported: nothing to read (unless it was set aside for its size: the limit may be higher now).
    if (previous && previous.file_size === size && previous.file_mtime_ms === mtimeMs && !previous.content_hash.startsWith(OVER_LIMIT)) return { ...base, status: 'unchanged' };
    // (a compressed document is held to it as it is decompressed)
    const tooLarge = !importer.followable && path.extname(file) !== '.parquet' && !isCompressed(file) ? documentTooLarge(file, size, batch.maxDocumentBytes) : null;
    if (tooLarge) return this.setAsideTooLarge(tooLarge, base, run, size, mtimeMs, opts, batch, writer);
    let content: Buffer | undefined;
    /** The file's items, when they were parsed ahead (by a worker, or this thread while the workers were busy). */
    let prepared: PreparedItem[] | undefined;
    let parsedByWorker: boolean | undefined;
    let startOffset = 0;
    let startLine = 1;
    // Hashes what is read, in the same pass: the content hash that de-duplicates imports.
    let hash = createHash('sha256');
    let hashed = 0;
    /** The hash of a file read whole. */
    let full = '';
    if (!importer.followable) {
      try {
        if (document) {
          // Read and hashed ahead, perhaps parsed too (see import).
          ({ content, hash: full, items: prepared, worker: parsedByWorker } = await document);
        } else if (path.extname(file) === '.parquet') {
          for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) hash.update(chunk);
          full = hash.digest('hex');
        } else {
          // Whole documents: read once (decompressed), hash the bytes, hand them to the importer.
          content = readDocumentSync(file, batch.maxDocumentBytes);
          full = hash.update(content).digest('hex');
        }
      } catch (err) {
        // A compressed document that decompressed past the limit.
        if (isTooLarge(err)) return this.setAsideTooLarge(err, base, run, size, mtimeMs, opts, batch, writer);
        throw err;
      }
      hashed = size;
      if (batch.hashes.has(`${run}:${full}`)) return { ...base, status: 'unchanged' };
    } else if (previous?.end_offset && (size >= previous.end_offset || isCompressed(file))) {
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
    let lastText: RecordText | undefined;
    const items: AsyncIterable<PreparedItem> | PreparedItem[] = prepared ?? importer.read(file, { split: opts.split, startOffset, startLine, mapping: opts.mapping, verdicts: opts.verdicts, tables: this.tables(), content, onChunk });
    for await (const item of items) {
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
      // Samples of one prompt arrive together: each prompt is hashed once.
      const text = item.text ?? recordText(rec, lastText);
      if (!isEncoded(text)) lastText = text;
      const promptHash = text.promptHash;
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
        text,
        promptId: rec.promptId ?? `p:${promptHash}`,
        groupId,
        sampleIndex,
        rawRef,
        steps: item.steps,
      }).catch((err: unknown) => {
        // Whatever DuckDB still refuses names the record; the appender is then unusable, so this ends the import.
        throw new ImportError(file, item.at.line ?? null, `the store could not hold this record (${(err as Error).message.split('\n')[0]})`);
      });
      rollouts++;
      steps += rec.steps?.length ?? item.steps?.count ?? 0;
      if (rollouts % 10_000 === 0) opts.onProgress?.({ file, rollouts });
    }
    if (rollouts === 0 && badRecords === 0) return { ...base, status: 'unchanged', resumed: startOffset > 0 };
    // The hash covers what was read; a half-written last line was read but not consumed.
    const consumed = !importer.followable ? full : endOffset === hashed ? hash.digest('hex') : (await hashPrefix(file, endOffset)).digest('hex');
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
    return { ...base, status: 'imported', resumed: startOffset > 0, ...(parsedByWorker ? { worker: true as const } : {}), rollouts, steps, badRecords, importId };
  }

  /**
   * The fast path for formats DuckDB can read column to column (see BulkPlan): fresh,
   * complete files of one shape go through DuckDB queries that insert them with the ids,
   * groups, sample indices and record references the streaming path would give (see
   * bulkInsertSql): one, or two lanes side by side on a large group (see laneSplit), each
   * on one DuckDB thread, while this thread hashes each file and counts its lines.
   * Files with a bad record, or whose records are not their lines one to one, are taken
   * out again and returned, to be streamed (which reports errors with their lines).
   */
  private async importBulk(candidates: { file: string; importer: Importer; run: string }[], opts: ImportOptions, batch: Batch): Promise<{ results: FileImportResult[]; stream: typeof candidates; notes: string[] }> {
    const results: FileImportResult[] = [];
    const notes: string[] = [];
    const stream: typeof candidates = [];
    /** What the passes over the files below read into, one at a time. */
    const buffer = Buffer.allocUnsafe(1 << 20);
    const groups = new Map<string, { plan: BulkPlan; files: { file: string; importer: Importer; run: string; size: number; mtimeMs: number; plan: BulkPlan; lines: number }[] }>();
    for (const c of candidates) {
      const { size, mtimeMs } = statSync(c.file);
      const previous = batch.previous.get(`${c.run}\0${c.file}`);
      if (previous && previous.file_size === size && previous.file_mtime_ms === mtimeMs) {
        results.push({ file: c.file, format: c.importer.format, run: c.run, status: 'unchanged', resumed: false, reader: 'duckdb', rollouts: 0, steps: 0, badRecords: 0 });
        continue;
      }
      const head = previous ? '' : readJsonlHead(c.file);
      const plan = previous ? null : c.importer.bulk!(c.file, head, { split: opts.split });
      if (!plan) {
        stream.push(c);
        continue;
      }
      const key = `${c.importer.format}\u0001${c.run}\u0001${plan.signature}`;
      const g = groups.get(key) ?? { plan, files: [] };
      g.files.push({ ...c, size, mtimeMs, plan, lines: estimatedLines(size, head) });
      groups.set(key, g);
    }
    for (const { plan, files } of groups.values()) {
      const run = files[0]!.run;
      const format = files[0]!.importer.format;
      const baseId = batch.nextRolloutId;
      const firstImport = batch.nextImportId;
      // Record numbers are line numbers when each file's records are its lines, which the
      // counts below verify.
      const meta: { file: string; importId: number; lines: number; hash: string; endsWithNewline: boolean; duplicateKeys: boolean; size: number; mtimeMs: number; plan: BulkPlan }[] = [];
      meta.push(...files.map((f, i) => ({ file: f.file, importId: firstImport + i, lines: 0, hash: '', endsWithNewline: false, duplicateKeys: false, size: f.size, mtimeMs: f.mtimeMs, plan: f.plan })));
      // Each statement runs on one thread (its windows follow file order): a second thread
      // would only wait for it, busily, on a core the other lane or this thread's hashing
      // takes. IN lists stay comparisons: DuckDB would plan a long one as a join, and the
      // windows above a join would hold every row instead of streaming them. These
      // settings are the instance's: they hold for both lanes' connections.
      const was = (await this.one<{ m: string; t: number; o: string; f: string; w: number }>(
        `select current_setting('memory_limit') as m, current_setting('threads') as t, current_setting('disabled_optimizers') as o, current_setting('allocator_flush_threshold') as f, current_setting('write_buffer_row_group_count') as w`,
      ))!;
      const restore = async () => {
        await this.conn.run(`set memory_limit = ${sqlLiteral(was.m)}`);
        await this.conn.run(`set allocator_flush_threshold = ${sqlLiteral(was.f)}`);
        await this.conn.run(`set write_buffer_row_group_count = ${Number(was.w)}`);
        await this.conn.run(`set threads = ${Number(was.t)}`);
        await this.conn.run(`set disabled_optimizers = ${sqlLiteral(was.o)}`);
      };
      const lineBytes = files.reduce((n, f) => n + f.size, 0) / Math.max(1, files.reduce((n, f) => n + f.lines, 0));
      await this.conn.run(`set memory_limit = '${lineBytes > LONG_LINE_BYTES ? BULK_MEMORY_LIMIT_LONG_LINES_MB : BULK_MEMORY_LIMIT_MB}MB'`);
      await this.conn.run(`set allocator_flush_threshold = '${BULK_ALLOCATOR_FLUSH}'`);
      await this.conn.run(`set write_buffer_row_group_count = ${BULK_WRITE_BUFFER_ROW_GROUPS}`);
      await this.conn.run('set threads = 1');
      await this.conn.run(`set disabled_optimizers = ${sqlLiteral([...was.o.split(',').filter((o) => o.trim()), 'in_clause'].join(','))}`);
      // A signal that interrupted the statements above must not let the insert start.
      if (opts.signal?.aborted) {
        await restore();
        throw interrupted(files[0]!.file, null);
      }
      // Two lanes, each a single-threaded statement on its own connection, take one core
      // each: the first half of the files (by bytes) from the group's first rollout id, the
      // second from the id after the first half's lines, counted first (a newline count,
      // far quicker than the statement). Each file keeps its import id.
      const half = laneSplit(files, opts.bulkLaneRows ?? LANE_MIN_ROWS);
      const insert = (conn: DuckDBConnection, from: number, to: number, laneBase: number) => {
        const done = conn.run(bulkInsertSql(plan, files.slice(from, to), firstImport + from, laneBase), [run, opts.version ?? null, format]).then(() => undefined);
        done.catch(() => undefined); // awaited below
        return done;
      };
      const lanes = [insert(this.conn, 0, half, baseId)];
      let second: DuckDBConnection | undefined;
      const stopSecond = () => second?.interrupt();
      opts.signal?.addEventListener('abort', stopSecond, { once: true });
      let firstLaneLines = 0;
      let total = 0;
      try {
        if (half < files.length) {
          for (const f of files.slice(0, half)) firstLaneLines += await countLines(f.file, buffer, opts.signal);
          trace(`counted the first lane's ${firstLaneLines} line(s)`);
          if (!opts.signal?.aborted) second = await this.db.connect();
          // (a signal while it connected: the lane does not start)
          if (second && !opts.signal?.aborted) lanes.push(insert(second, half, files.length, baseId + firstLaneLines));
        }
        for (const m of meta) {
          const r = await hashAndCount(m.file, buffer, opts.signal, { keys: m.plan.keys, messages: m.plan.messages, singleTurn: m.plan.singleTurn, jsonText: m.plan.jsonText, markers: m.plan.markers });
          Object.assign(m, { hash: r.hash, lines: r.lines, endsWithNewline: r.last === 0x0a, duplicateKeys: r.duplicateKeys });
          total += r.lines;
        }
        trace(`hashed ${files.length} file(s)`);
      } finally {
        // Whatever happened above, both statements end before this goes on (or rolls back).
        await Promise.allSettled(lanes);
        opts.signal?.removeEventListener('abort', stopSecond);
        second?.closeSync();
        await restore();
      }
      const last = firstImport + files.length - 1;
      const refusal = (await Promise.allSettled(lanes)).find((l): l is PromiseRejectedResult => l.status === 'rejected');
      const failed = refusal !== undefined;
      if (opts.signal?.aborted) throw interrupted(files[0]!.file, null);
      // Per file: its rows, id range and bad records; its groups, and the rows that start a
      // run of one group's samples (one per group when each group's samples are together).
      const counts = failed
        ? new Map<number, never>()
        : new Map(
            (await this.all<{ import_id: number; n: number; lo: number; hi: number; bad: number; groups: number; starts: number }>(
              `select import_id, count(*) as n, min(id) as lo, max(id) as hi, count(*) filter (where sample_index = -1) as bad,
                      count(distinct group_id) as groups, count(*) filter (where sample_index = 0) as starts
               from rollout_rows where import_id between ? and ? group by 1`,
              [firstImport, last],
            )).map((r) => [r.import_id, r]),
          );
      // The second lane's ids follow the first lane's lines as counted before it started:
      // the files must not have changed since, and the first lane's ids must stay below.
      const lanesApart =
        half === files.length ||
        (meta.slice(0, half).reduce((n, m) => n + m.lines, 0) === firstLaneLines && meta.slice(0, half).every((m) => (counts.get(m.importId)?.hi ?? -Infinity) < baseId + firstLaneLines));
      if (failed || !lanesApart) {
        // DuckDB refused a value somewhere in these files (a number out of range, a line over
        // its object size), or the files changed while it read them: stream them all, which
        // names each bad record with its line.
        trace(failed ? 'DuckDB could not read the files: streaming them' : 'the files changed while DuckDB read them: streaming them');
        const why = failed ? `DuckDB could not read them column by column (${firstLine(refusal.reason)})` : 'they changed while DuckDB read them';
        notes.push(`${files.length} ${format} file(s) from ${path.dirname(files[0]!.file)} were read line by line, which is slower: ${why}`);
        await this.conn.run(`delete from rollout_rows where import_id between ${firstImport} and ${last}`);
        stream.push(...files);
        continue;
      }
      trace(`inserted (DuckDB read the files, ${lanes.length} lane(s))`);
      batch.nextRolloutId = Math.max(batch.nextRolloutId, ...[...counts.values()].map((c) => c.hi + 1), baseId + total);
      batch.nextImportId += files.length;
      // A file is good when it has no bad record, ends with a newline, names no key twice in
      // a record (DuckDB would keep the first value, JSON the last) nor other keys than the
      // plan's, and its records are exactly its lines, read in one contiguous run (so record
      // k is line k).
      const good: typeof meta = [];
      for (const m of meta) {
        const c = counts.get(m.importId);
        const ok = m.endsWithNewline && !m.duplicateKeys && m.lines > 0 && c !== undefined && c.bad === 0 && c.n === m.lines && c.hi - c.lo + 1 === c.n;
        if (ok && !batch.hashes.has(`${run}:${m.hash}`)) {
          good.push(m);
          // A byte-identical copy later in this batch is then unchanged, as on the streaming path.
          batch.hashes.add(`${run}:${m.hash}`);
        } else if (ok) results.push({ file: m.file, format, run, status: 'unchanged', resumed: false, reader: 'duckdb', rollouts: 0, steps: 0, badRecords: 0 });
        else stream.push(files.find((f) => f.file === m.file)!);
      }
      const goodIds = good.map((m) => m.importId);
      trace('checked');
      await this.conn.run(`delete from rollout_rows where import_id between ${firstImport} and ${last}${goodIds.length ? ` and import_id not in (${goodIds.join(', ')})` : ''}`);
      // Files where a group's samples are not all together: count their sample indices again,
      // in file order within each group, as the streaming path does.
      const scattered = good.filter((m) => counts.get(m.importId)!.starts !== counts.get(m.importId)!.groups).map((m) => m.importId);
      if (scattered.length) {
        await this.conn.run(
          `update rollout_rows set sample_index = s.idx
           from (select id, (row_number() over (partition by import_id, group_id order by id) - 1)::integer as idx
                 from rollout_rows where import_id in (${scattered.join(', ')})) s
           where rollout_rows.id = s.id`,
        );
        trace(`sample indices counted again in ${scattered.length} file(s)`);
      }
      for (const m of good) {
        batch.hashes.add(`${run}:${m.hash}`);
        batch.records.push({ id: m.importId, path: m.file, format, run, hash: m.hash, startOffset: 0, endOffset: m.size, endLine: m.lines, reader: 'duckdb', size: m.size, mtimeMs: m.mtimeMs, rollouts: m.lines, steps: 0, badRecords: 0 });
        results.push({ file: m.file, format, run, status: 'imported', resumed: false, reader: 'duckdb', rollouts: m.lines, steps: 0, badRecords: 0, importId: m.importId });
      }
    }
    return { results, stream, notes };
  }

  /** Closes the reader of columnar files, if one was opened. */
  close(): void {
    this.tableReader?.close();
    this.tableReader = undefined;
  }
}

interface PreviousImport {
  end_offset: number | null;
  end_line: number | null;
  content_hash: string;
  file_size: number | null;
  file_mtime_ms: number | null;
}

interface Batch {
  /** Files read whole are refused over this size. */
  maxDocumentBytes: number;
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
  text: RecordText | EncodedText;
  promptId: string;
  groupId: string;
  sampleIndex: number;
  rawRef: string;
  /** The rollout's steps as a worker serialized them (its record then holds none). */
  steps?: StepRows;
}

let floatListType: DuckDBListType | undefined;
/** FLOAT[]: token values kept at 4 bytes each. */
function floatList(): DuckDBListType {
  if (!floatListType) {
    const { LIST, FLOAT } = loadDuckDB();
    floatListType = LIST(FLOAT);
  }
  return floatListType;
}

/** Each running maximum below: the value of the last row where the expression was set. */
const SO_FAR = 'over (rows between unbounded preceding and current row)';

/**
 * The bulk path's one statement: DuckDB reads `files` (one plan's) and inserts their rows
 * with the ids, groups, sample indices and record references the streaming path gives.
 * The reader's running ordinality numbers the records in file order; `lag` and running
 * maxima (streaming windows, in the same single pass) find where each file starts, giving
 * its line numbers (`file:line`), and where each run of one group's samples starts, giving
 * the sample index. The checks that follow it verify the assumptions: records are the
 * file's lines, and a group's samples are one run in a file (files where they are not get
 * their indices counted again, see importBulk). Per-file values come from lists indexed by
 * the reader's file index (a join would end the streaming windows' file order). Bad
 * records get sample index -1; the prompt's md5 is computed once per row that needs it (no
 * prompt or group id of its own), in a subquery of its own (DuckDB would compute it once per use).
 */
function bulkInsertSql(plan: BulkPlan, files: { file: string; plan: BulkPlan }[], firstImport: number, baseId: number): string {
  const perFile = (value: (f: (typeof files)[number]) => string, type: string) => `([${files.map(value).join(', ')}]::${type}[])[file_index::bigint + 1]`;
  // Columns the projection leaves out get the store's defaults (see BULK_OPTIONAL_COLUMNS).
  const defaults = (Object.keys(BULK_OPTIONAL_COLUMNS) as BulkOptionalColumn[]).filter((c) => !plan.optional?.includes(c)).map((c) => `, ${BULK_OPTIONAL_COLUMNS[c]} as ${c}`).join('');
  return `insert into rollout_rows
    select (${baseId} + ordinality - 1)::bigint, import_id, $1, $2, $3, step, split, coalesce(prompt_id, 'p:' || prompt_hash), group_id,
           case when bad then -1 else (ordinality - max(run_start) ${SO_FAR})::integer end,
           prompt, prompt_format, response, response_format, ground_truth, reward, reward_components, correct, extracted_answer,
           advantage, stop_reason, response_tokens, num_turns, errors, timing_ms, data_source, env_class, extra,
           filename || ':' || (ordinality - max(file_start) ${SO_FAR} + 1),
           length(response), case when num_turns <= 1 then ${NO_ANSWER_SQL} end
    from (select *, case when import_id is distinct from lag(import_id) over () then ordinality end as file_start,
                 case when import_id is distinct from lag(import_id) over () or group_id is distinct from lag(group_id) over () then ordinality end as run_start
          from (select * replace (coalesce(group_id, split || ':' || step || ':' || prompt_hash || coalesce(':' || data_source, '')) as group_id)
                from (select *, case when prompt_id is null or group_id is null then left(md5(coalesce(prompt, '')), 16) end as prompt_hash
                      from (select ordinality, filename, import_id, ${plan.projection}${defaults}
                            from (select *, filename, ${firstImport} + file_index::integer as import_id,
                                         ${perFile((f) => String(f.plan.fileStep), 'integer')} as file_step,
                                         ${perFile((f) => sqlLiteral(f.plan.fileSplit), 'varchar')} as file_split
                                  from read_json([${files.map((f) => sqlLiteral(f.file)).join(', ')}], format = 'newline_delimited', columns = ${plan.columns}, ignore_errors = true) with ordinality)))))`;
}

/** Appends rows through DuckDB appenders, flushing in bounded chunks. */
class ChunkWriter {
  private rollouts: DuckDBAppender | undefined;
  private steps: DuckDBAppender | undefined;
  private tokens: DuckDBAppender | undefined;
  private quarantined: DuckDBAppender | undefined;
  /** Rows whose texts came as bytes (from a document worker) go to the appenders a chunk at a time. */
  private rolloutChunks: ChunkRows | undefined;
  /** Step rows of prepared rollouts, as JSON, until the next write (see insertStaged). */
  private staged: { ids: bigint[]; imports: number[]; steps: string[] } = { ids: [], imports: [], steps: [] };
  private rows = 0;
  private bytes = 0;
  /** `bytes` when the appenders last wrote to the table (see write). */
  private written = 0;

  constructor(private readonly conn: DuckDBConnection) {}

  async open(): Promise<void> {
    this.rollouts = await this.conn.createAppender('rollout_rows');
    this.steps = await this.conn.createAppender('step_rows');
    this.rolloutChunks = new ChunkRows(this.rollouts);
    this.tokens = await this.conn.createAppender('token_rows');
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
    const t = c.text;
    const encoded = isEncoded(t);
    const row = rolloutRow(rec, c);
    if (encoded) this.rolloutChunks!.push(row);
    else {
      appendRow(a, ROLLOUT_KINDS, row);
      this.rolloutChunks!.appendedRow();
    }
    this.bytes += encoded ? t.prompt.length + t.response.length : t.promptText.length + t.responseText.length;
    if (c.steps) {
      this.staged.ids.push(BigInt(c.id));
      this.staged.imports.push(c.importId);
      this.staged.steps.push(c.steps.json);
      this.bytes += c.steps.json.length;
    }
    // Steps a record brings itself (parsed on this thread; a worker's come as c.steps).
    if (rec.steps) {
      const s = this.steps!;
      const id = BigInt(c.id);
      const steps = rec.steps;
      for (let turn = 0; turn < steps.length; turn++) {
        const st = steps[turn]!;
        const values = [id, c.importId, turn, st.role, st.actionKind, st.command ?? null, int(st.exitCode), int(st.observationBytes), st.formatError, st.timeout, st.truncated, int(st.tokens)];
        appendRow(s, STEP_KINDS, values);
        this.bytes += st.command?.length ?? 0;
      }
    }
    for (const t of rec.tokens ?? []) {
      const a = this.tokens!;
      a.appendBigInt(BigInt(c.id));
      a.appendInteger(c.importId);
      a.appendInteger(t.turn);
      a.appendVarchar(t.kind);
      a.appendList(t.values, floatList());
      a.endRow();
      this.bytes += t.values.length * 4;
    }
    if (++this.rows >= CHUNK_ROWS || this.bytes >= CHUNK_BYTES) await this.flush();
    else if (encoded && this.bytes - this.written >= WRITE_BYTES) await this.write();
  }

  /** Step rows of the rollouts workers prepared, unnested by DuckDB from their JSON (see StepRows), in one statement. */
  private async insertStaged(): Promise<void> {
    const { ids, imports, steps } = this.staged;
    if (!ids.length) return;
    this.staged = { ids: [], imports: [], steps: [] };
    const { DuckDBListValue } = loadDuckDB();
    await this.conn.run(
      `insert into step_rows (rollout_id, import_id, turn, role, action_kind, command, exit_code, observation_bytes, format_error, timeout, truncated, tokens)
       select id, import_id, unnest(range(len(c.role)))::integer, unnest(c.role), unnest(c.actionKind), unnest(c.command), unnest(c.exitCode),
              unnest(c.observationBytes), unnest(c.formatError), unnest(c.timeout), unnest(c.truncated), unnest(c.tokens)
       from (select unnest($1::bigint[]) as id, unnest($2::integer[]) as import_id, from_json(unnest($3::varchar[]), ${sqlLiteral(STEP_COLUMNS_TYPE)}) as c)`,
      [new DuckDBListValue(ids), new DuckDBListValue(imports), new DuckDBListValue(steps)],
    );
  }

  /**
   * Writes what the appenders hold to the table (inside the transaction), so that this
   * thread does DuckDB's share of the work while the document workers parse the next
   * files, rather than all of it once they are done.
   */
  private async write(): Promise<void> {
    await this.insertStaged();
    this.rolloutChunks!.flush();
    this.rollouts!.flushSync();
    this.steps!.flushSync();
    this.written = this.bytes;
  }

  async flush(): Promise<void> {
    await this.close();
    this.rows = 0;
    this.bytes = 0;
    this.written = 0;
    await this.open();
  }

  async close(): Promise<void> {
    await this.insertStaged();
    this.rolloutChunks?.flush();
    this.rolloutChunks = undefined;
    this.rollouts?.closeSync();
    this.steps?.closeSync();
    this.tokens?.closeSync();
    this.quarantined?.closeSync();
    this.rollouts = this.steps = this.tokens = this.quarantined = undefined;
  }

  /** Drops what one file appended (it turned out to duplicate an earlier import). */
  async discard(importId: number): Promise<void> {
    await this.flush();
    for (const t of IMPORT_TABLES) await this.conn.run(`delete from ${t} where import_id = ?`, [importId]);
  }

  async abort(): Promise<void> {
    this.staged = { ids: [], imports: [], steps: [] };
    try {
      await this.close();
    } catch {
      // the rows are discarded with the import anyway
    }
  }
}

/** How the appender takes each column's value. */
type ColumnKind = 'bigint' | 'integer' | 'varchar' | 'double' | 'boolean';

/** rollout_rows' columns, in the table's order. */
const ROLLOUT_KINDS: readonly ColumnKind[] = [
  'bigint', 'integer', 'varchar', 'varchar', 'varchar', 'integer', 'varchar', 'varchar', 'varchar', 'integer',
  'varchar', 'varchar', 'varchar', 'varchar', 'varchar', 'double', 'varchar', 'boolean', 'varchar', 'double',
  'varchar', 'integer', 'integer', 'varchar', 'double', 'varchar', 'varchar', 'varchar', 'varchar', 'integer', 'boolean',
];
/** step_rows' columns, in the table's order. */
const STEP_KINDS: readonly ColumnKind[] = ['bigint', 'integer', 'integer', 'varchar', 'varchar', 'varchar', 'integer', 'integer', 'boolean', 'boolean', 'boolean', 'integer'];

/** A rollout row's values, in rollout_rows' order (see ROLLOUT_KINDS); its texts as bytes when they came so. */
function rolloutRow(rec: RolloutRecord, c: RowContext): ChunkValue[] {
  const t = c.text;
  const encoded = isEncoded(t);
  return [
    BigInt(c.id),
    c.importId,
    c.run,
    c.version,
    c.framework,
    Math.trunc(rec.step),
    rec.split,
    c.promptId,
    c.groupId,
    c.sampleIndex,
    encoded ? t.prompt : t.promptText,
    t.promptKind,
    encoded ? t.response : t.responseText,
    t.responseKind,
    rec.groundTruth ?? null,
    num(rec.reward),
    json(rec.rewardComponents && Object.keys(rec.rewardComponents).length ? rec.rewardComponents : null),
    rec.correct ?? null,
    rec.extractedAnswer ?? null,
    num(rec.advantage),
    rec.stopReason ?? null,
    int(rec.responseTokens),
    int(rec.numTurns ?? (rec.steps ? rec.steps.filter((s) => s.role === 'assistant').length : 1)),
    json(rec.errors?.length ? rec.errors : null),
    num(rec.timingMs),
    rec.dataSource ?? null,
    rec.envClass ?? null,
    json(rec.extra && Object.keys(rec.extra).length ? rec.extra : null),
    c.rawRef,
    t.responseChars,
    null, // no_answer: computed by DuckDB when the import is recorded
  ];
}

/** Appends one row value by value. */
function appendRow(a: DuckDBAppender, kinds: readonly ColumnKind[], values: readonly ChunkValue[]): void {
  for (let k = 0; k < kinds.length; k++) {
    const v = values[k];
    if (v === null || v === undefined) a.appendNull();
    else if (kinds[k] === 'varchar') a.appendVarchar(v as string);
    else if (kinds[k] === 'integer') a.appendInteger(v as number);
    else if (kinds[k] === 'bigint') a.appendBigInt(v as bigint);
    else if (kinds[k] === 'double') a.appendDouble(v as number);
    else a.appendBoolean(v as boolean);
  }
  a.endRow();
}

/** A finite number, or null (NaN and infinities are stored as null). */
function num(v: number | null | undefined): number | null {
  return v === null || v === undefined || !Number.isFinite(v) ? null : v;
}
function json(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}

function varchar(a: DuckDBAppender, v: string | null | undefined) {
  if (v === null || v === undefined) a.appendNull();
  else a.appendVarchar(v);
}

/** Whole documents read ahead of the one being imported (see import). */
const READ_AHEAD = 3;
/** The content hash recorded for a file set aside for its size (its bytes unread). */
const OVER_LIMIT = 'over-limit:';
/** Documents past this size are read when their turn comes, not ahead (memory stays bounded). */
const READ_AHEAD_MAX_BYTES = 64 * 1024 * 1024;

/** Whole documents to stream before an import starts document workers by default. */
const WORKERS_MIN_FILES = 8;
/** Documents parsed ahead of the one being appended, when workers parse them (their results wait in memory). */
const PARSE_AHEAD = 8;

/** Whether the streaming path would read `t` whole, and has not imported it as it is now. */
function readsAhead(t: { file: string; importer: Importer; run: string }, batch: Batch): boolean {
  if (t.importer.followable || path.extname(t.file) === '.parquet') return false;
  let st;
  try {
    st = statSync(t.file);
  } catch {
    return false; // importFile reports it
  }
  const previous = batch.previous.get(`${t.run}\0${t.file}`);
  return documentBytes(t.file, st.size) <= Math.min(READ_AHEAD_MAX_BYTES, batch.maxDocumentBytes) && !(previous && previous.file_size === st.size && previous.file_mtime_ms === st.mtimeMs);
}

/** Reads and hashes a file off this thread (libuv's pool). */
function readWholeDocument(file: string, maxBytes: number): Promise<ParsedDocument> {
  const doc = readDocument(file, maxBytes).then(async (content) => ({ content, hash: Buffer.from(await webcrypto.subtle.digest('SHA-256', content)).toString('hex') }));
  doc.catch(() => undefined); // awaited by importFile, unless the import stops first
  return doc;
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

/** The run name a path implies: `…/my-run/rollout_data/12.jsonl` given as `…/my-run` → `my-run`. */
function defaultRunName(root: string): string {
  const base = path.basename(uncompressedName(path.resolve(root))).replace(/\.(jsonl|json|parquet|traj)$/, '');
  return base || 'default';
}

function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * sha256 of a file, its newline count, its last byte and whether a record names a key
 * twice or is not of the plan's `shape`, in one pass (stopped by `signal`).
 */
async function hashAndCount(file: string, buffer: Buffer, signal?: AbortSignal, shape?: ShapeCheck): Promise<{ hash: string; lines: number; last: number; duplicateKeys: boolean }> {
  const hash = createHash('sha256');
  const keys = new DuplicateKeyScan(shape);
  let lines = 0;
  let last = 0x0a;
  await eachChunk(file, buffer, signal, (chunk) => {
    hash.update(chunk);
    keys.feed(chunk);
    lines += newlines(chunk);
    last = chunk[chunk.length - 1]!;
  });
  return { hash: hash.digest('hex'), lines, last, duplicateKeys: keys.found };
}

/** A file's newline count (stopped by `signal`). */
async function countLines(file: string, buffer: Buffer, signal?: AbortSignal): Promise<number> {
  let lines = 0;
  await eachChunk(file, buffer, signal, (chunk) => (lines += newlines(chunk)));
  return lines;
}

function newlines(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * Hands `fn` a file's bytes in chunks read into `buffer`, reused (`fn` must not keep
 * them; one pass at a time per buffer), until the end or until `signal` aborts (the
 * caller sees the signal and stops). A stream would allocate a buffer per chunk:
 * gigabytes that wait in memory for the collector.
 */
async function eachChunk(file: string, scanBuffer: Buffer, signal: AbortSignal | undefined, fn: (chunk: Buffer) => void): Promise<void> {
  const fh = await open(file, 'r');
  try {
    for (;;) {
      if (signal?.aborted) return;
      const { bytesRead } = await fh.read(scanBuffer, 0, scanBuffer.length, null);
      if (bytesRead === 0) return;
      fn(scanBuffer.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
}

/**
 * Where a bulk group's files split into two insert lanes of about equal bytes: files
 * [0, k) go to the first, [k, n) to the second; n (one lane) for a single file, or when a
 * lane would be expected to hold fewer than `minRows` rows.
 */
export function laneSplit(files: readonly { size: number; lines: number }[], minRows: number): number {
  if (files.length < 2) return files.length;
  const total = files.reduce((n, f) => n + f.size, 0);
  let k = 1;
  let before = files[0]!.size;
  // Moves the split right while that brings the first lane's bytes closer to half.
  while (k < files.length - 1 && Math.abs(before + files[k]!.size - total / 2) < Math.abs(before - total / 2)) before += files[k++]!.size;
  const rows = (from: number, to: number) => files.slice(from, to).reduce((n, f) => n + f.lines, 0);
  return rows(0, k) >= minRows && rows(k, files.length) >= minRows ? k : files.length;
}

/** A file's lines, estimated from those its head holds (a head of one unfinished line: its length is a lower bound on theirs). */
function estimatedLines(size: number, head: string): number {
  const bytes = Buffer.byteLength(head, 'utf8');
  if (!bytes) return 0;
  let n = 0;
  for (let i = head.indexOf('\n'); i !== -1; i = head.indexOf('\n', i + 1)) n++;
  return (size * Math.max(n, 1)) / bytes;
}


/** The first line of an error's message, at most 200 characters. */
function firstLine(err: unknown): string {
  const line = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function interrupted(file: string, line: number | null): ImportError {
  return new ImportError(file, line, 'the import was interrupted; nothing was recorded');
}

/** How a stored row names its source: file:line, or file#record for documents of many records. */
function positionOf(at: SourcePosition): string {
  return at.line !== undefined ? `${at.file}:${at.line}` : `${at.file}#${at.record ?? 1}`;
}


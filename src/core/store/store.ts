import { createHash, type Hash } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import type { Split } from '../model';
import { loadDuckDB } from './duckdb';
import { discover } from './importers';
import type { FieldMapping, FormatName, Importer, TableReader } from './importers/types';
import { ImportError, isBad, type RolloutRecord } from './rows';
import { DDL, SCHEMA_VERSION } from './schema';

export type OnError = 'fail' | 'skip' | 'quarantine';

export interface ImportOptions {
  /** Run the rollouts belong to (default: the name of the path given). */
  run?: string;
  version?: string | null;
  split?: Split;
  format?: FormatName;
  onError?: OnError;
  mapping?: FieldMapping;
  /** Checked between records: an aborted import leaves the store as it was. */
  signal?: AbortSignal;
  onProgress?: (p: { file: string; rollouts: number }) => void;
}

export interface FileImportResult {
  file: string;
  format: FormatName;
  run: string;
  /** imported: new rows; unchanged: nothing new (same content, or a live file with no new complete line). */
  status: 'imported' | 'unchanged';
  /** The file continued an earlier import of the same file (a live run appending). */
  resumed: boolean;
  rollouts: number;
  steps: number;
  badRecords: number;
  importId?: number;
}

export interface ImportSummary {
  files: FileImportResult[];
  ignored: string[];
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
 * The embedded rollout store (DuckDB). One writer at a time: DuckDB locks the file.
 */
export class RolloutStore {
  private tableReader: (TableReader & { close(): void }) | undefined;

  private constructor(
    readonly file: string,
    private readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
  ) {}

  static async open(file: string): Promise<RolloutStore> {
    const { DuckDBInstance } = loadDuckDB();
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(file, { memory_limit: '1GB', threads: '2', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
    } catch (err) {
      const msg = (err as Error).message;
      if (/lock/i.test(msg)) throw new Error(`${file}: the rollout store is open in another process (${msg.split('\n')[0]}). Close it there, then retry.`);
      throw new Error(`${file}: cannot open the rollout store: ${msg.split('\n')[0]}`);
    }
    const conn = await instance.connect();
    const store = new RolloutStore(file, instance, conn);
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

  async one<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  private tables(): TableReader {
    if (!this.tableReader) this.tableReader = parquetReader(this.instance);
    return this.tableReader;
  }

  /**
   * Imports files and directories. The whole command lands or nothing does: rows are
   * appended in bounded chunks under fresh import ids, and become visible only when the
   * imports table records those ids, in one statement at the end.
   */
  async import(paths: string[], opts: ImportOptions = {}): Promise<ImportSummary> {
    const { files, ignored } = await discover(paths, opts.format);
    const summary: ImportSummary = { files: [], ignored, rollouts: 0, steps: 0, badRecords: 0 };
    const base = (await this.one<{ n: number }>(`select coalesce(max(id), 0) as n from imports`))!.n;
    const batch: Batch = {
      nextImportId: base + 1,
      nextRolloutId: (await this.one<{ n: number }>(`select coalesce(max(id), 0) + 1 as n from rollout_rows`))!.n,
      hashes: new Set((await this.all<{ h: string }>(`select run_id || ':' || content_hash as h from imports`)).map((r) => r.h)),
      previous: new Map(
        (await this.all<{ path: string; run_id: string; end_offset: number; end_line: number; content_hash: string }>(
          `select path, run_id, end_offset, end_line, content_hash from imports where end_offset is not null qualify row_number() over (partition by path, run_id order by end_offset desc) = 1`,
        )).map((r) => [`${r.run_id}\0${r.path}`, r]),
      ),
      records: [],
      runs: new Map(),
    };
    const writer = new ChunkWriter(this.conn);
    try {
      await writer.open();
      const seen = new Set<string>();
      for (const f of files) {
        const file = path.resolve(f.file);
        if (seen.has(file)) continue;
        seen.add(file);
        const run = opts.run ?? defaultRunName(f.root);
        if (!batch.runs.has(run)) batch.runs.set(run, { framework: f.importer.format, source: path.resolve(f.root) });
        const r = await this.importFile(file, f.importer, run, opts, batch, writer);
        summary.files.push(r);
        summary.rollouts += r.rollouts;
        summary.steps += r.steps;
        summary.badRecords += r.badRecords;
      }
      await writer.close();
      await this.record(batch, opts);
      return summary;
    } catch (err) {
      await writer.abort();
      for (const t of ['step_rows', 'rollout_rows', 'quarantine']) await this.conn.run(`delete from ${t} where import_id > ?`, [base]);
      throw err;
    }
  }

  /** Makes a command's rows visible: one transaction writes its imports and runs. */
  private async record(batch: Batch, opts: ImportOptions): Promise<void> {
    if (!batch.records.length) return;
    await this.conn.run('begin');
    try {
      for (let i = 0; i < batch.records.length; i += 500) {
        const slice = batch.records.slice(i, i + 500);
        const params: DuckDBValue[] = [];
        for (const r of slice) params.push(r.id, r.path, r.format, r.run, opts.version ?? null, r.hash, r.startOffset, r.endOffset, r.endLine, r.rollouts, r.steps, r.badRecords);
        await this.conn.run(
          `insert into imports (id, path, format, run_id, version, status, content_hash, start_offset, end_offset, end_line, rollouts, steps, bad_records, started_at, finished_at)
           values ${slice.map(() => `(?, ?, ?, ?, ?, 'committed', ?, ?, ?, ?, ?, ?, ?, now(), now())`).join(', ')}`,
          params,
        );
      }
      for (const [run, r] of batch.runs) {
        await this.conn.run(`insert into runs values (?, ?, ?, ?, now()) on conflict do nothing`, [run, opts.version ?? null, r.framework, r.source]);
      }
      await this.conn.run('commit');
    } catch (err) {
      await this.conn.run('rollback');
      throw err;
    }
  }

  private async importFile(file: string, importer: Importer, run: string, opts: ImportOptions, batch: Batch, writer: ChunkWriter): Promise<FileImportResult> {
    const base = { file, format: importer.format, run, resumed: false, rollouts: 0, steps: 0, badRecords: 0 };
    const previous = importer.followable ? batch.previous.get(`${run}\0${file}`) : undefined;
    let content: Buffer | undefined;
    let hashes: { full: string; prefix: string | null; size: number };
    if (importer.followable || path.extname(file) === '.parquet') {
      hashes = await hashFile(file, previous?.end_offset);
    } else {
      // Whole documents: read once, hash the bytes, hand them to the importer.
      content = readFileSync(file);
      hashes = { full: createHash('sha256').update(content).digest('hex'), prefix: null, size: content.length };
    }
    if (batch.hashes.has(`${run}:${hashes.full}`)) return { ...base, status: 'unchanged' };
    let startOffset = 0;
    let startLine = 1;
    if (previous && hashes.prefix === previous.content_hash) {
      startOffset = previous.end_offset;
      startLine = previous.end_line + 1;
    }
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
    for await (const item of importer.read(file, { split: opts.split, startOffset, startLine, mapping: opts.mapping, tables: this.tables(), content })) {
      if (opts.signal?.aborted) throw new ImportError(file, item.at.line ?? null, 'the import was interrupted; nothing was recorded');
      if (item.at.endOffset !== undefined) endOffset = item.at.endOffset;
      if (item.at.line !== undefined) endLine = item.at.line;
      if (isBad(item)) {
        const policy = opts.onError ?? 'fail';
        if (policy === 'fail') throw item.error;
        badRecords++;
        if (policy === 'quarantine') writer.quarantine(importId, file, item.error);
        continue;
      }
      const rec = item.record;
      const promptText = typeof rec.prompt === 'string' ? rec.prompt : JSON.stringify(rec.prompt);
      const promptHash = sha1(promptText).slice(0, 16);
      const groupId = rec.groupId ?? `${rec.split}:${rec.step}:${promptHash}`;
      const sampleIndex = groupCounts.get(groupId) ?? 0;
      groupCounts.set(groupId, sampleIndex + 1);
      const rawRef = item.at.line !== undefined ? `${file}:${item.at.line}` : `${file}#${item.at.record ?? 1}`;
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
      });
      rollouts++;
      steps += rec.steps?.length ?? 0;
      if (rollouts % 10_000 === 0) opts.onProgress?.({ file, rollouts });
    }
    if (rollouts === 0 && badRecords === 0) return { ...base, status: 'unchanged', resumed: startOffset > 0 };
    const consumed = !importer.followable || endOffset === hashes.size ? hashes.full : await hashPrefix(file, endOffset);
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
      rollouts,
      steps,
      badRecords,
    });
    return { ...base, status: 'imported', resumed: startOffset > 0, rollouts, steps, badRecords, importId };
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

  async getRollout(id: number): Promise<{ rollout: RolloutRow; steps: StepRow[] } | null> {
    const rollout = await this.one<RolloutRow>(`select * from rollouts where id = ?`, [id]);
    if (!rollout) return null;
    for (const k of ['reward_components', 'errors', 'extra'] as const) {
      const v = rollout[k] as unknown;
      if (typeof v === 'string') (rollout as unknown as Record<string, unknown>)[k] = JSON.parse(v);
    }
    const steps = await this.all<StepRow>(`select * from steps where rollout_id = ? order by turn`, [id]);
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
    this.tableReader?.close();
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

interface Batch {
  nextImportId: number;
  nextRolloutId: number;
  /** `run:content_hash` of everything imported: the same bytes never land twice in a run. */
  hashes: Set<string>;
  /** Where each followed file stopped (run \0 path). */
  previous: Map<string, { end_offset: number; end_line: number; content_hash: string }>;
  records: {
    id: number;
    path: string;
    format: string;
    run: string;
    hash: string;
    startOffset: number;
    endOffset: number | null;
    endLine: number | null;
    rollouts: number;
    steps: number;
    badRecords: number;
  }[];
  runs: Map<string, { framework: string; source: string }>;
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

  private async flush(): Promise<void> {
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

function sha1(s: string): string {
  return createHash('sha1').update(s).digest('hex');
}

/** The run name a path implies: `…/my-run/rollout_data/12.jsonl` given as `…/my-run` → `my-run`. */
function defaultRunName(root: string): string {
  const base = path.basename(path.resolve(root)).replace(/\.(jsonl|json|parquet|traj)$/, '');
  return base || 'default';
}

/** sha256 of the whole file, and of its first `prefixLength` bytes when asked (one pass). */
async function hashFile(file: string, prefixLength?: number): Promise<{ full: string; prefix: string | null; size: number }> {
  const { size } = await stat(file);
  const full = createHash('sha256');
  let prefix: string | null = null;
  let seen = 0;
  if (prefixLength === 0) prefix = createHash('sha256').digest('hex');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    if (prefixLength !== undefined && prefix === null && seen + chunk.length >= prefixLength) {
      const head = chunk.subarray(0, prefixLength - seen);
      const copy: Hash = full.copy();
      copy.update(head);
      prefix = copy.digest('hex');
    }
    full.update(chunk);
    seen += chunk.length;
  }
  return { full: full.digest('hex'), prefix, size };
}

async function hashPrefix(file: string, length: number): Promise<string> {
  const h = createHash('sha256');
  if (length > 0) for await (const chunk of createReadStream(file, { start: 0, end: length - 1 }) as AsyncIterable<Buffer>) h.update(chunk);
  return h.digest('hex');
}

/** DuckDB hands back BIGINT as bigint; the store's numbers all fit in a double. */
function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) if (typeof v === 'bigint') row[k] = Number(v);
  return row;
}

/** Streams Parquet rows in chunks through a separate connection of the same instance. */
function parquetReader(instance: DuckDBInstance): TableReader & { close(): void } {
  const { JSDuckDBValueConverter } = loadDuckDB();
  let conn: DuckDBConnection | undefined;
  return {
    async *readParquet(file: string) {
      conn ??= await instance.connect();
      const result = await conn.stream(`select * from read_parquet(?)`, [file]);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const names = result.columnNames();
        for (const values of chunk.convertRows(JSDuckDBValueConverter)) {
          const row: Record<string, unknown> = {};
          names.forEach((n, i) => (row[n] = values[i]));
          yield normalizeRow(row);
        }
      }
    },
    close() {
      conn?.closeSync();
    },
  };
}

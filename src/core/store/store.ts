/**
 * The embedded rollout store (DuckDB): opening, closing, and the public API. Imports live
 * in ingest.ts, reads in queries.ts, the shared DuckDB instances in instances.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBPreparedStatement, DuckDBValue } from '@duckdb/node-api';
import { columnsOf, createTempTable, ensureDerivedViews, withScopedViews, withTempTables, type TempTable } from './derived';
import { Ingest, type ImportOptions, type ImportSummary } from './ingest';
import { acquireInstance, inInstanceTurn, normalizeRow, releaseInstance, watchReleaseRequests, type StoreDb } from './instances';
import { counts, getRollout, listRollouts, type ListQuery, type RolloutRow, type RolloutSummary, type StepRow } from './queries';
import { DDL, IMPORT_TABLES, SCHEMA_VERSION } from './schema';
import type { Scope } from './scope';

export type { FileImportResult, ImportOptions, ImportSummary, OnError } from './ingest';
export { defaultStorePath } from './instances';
export type { ListQuery, RolloutRow, RolloutSummary, StepRow } from './queries';
export type { TempTable } from './derived';
export { scopeWhere, type Scope } from './scope';

/**
 * The embedded rollout store (DuckDB). One writer at a time: DuckDB locks the file. Its
 * connection is private: readers go through the methods below (rows by SQL, derived
 * views, scoped views, temporary tables), writers through import.
 */
export class RolloutStore {
  private ingest: Ingest | undefined;

  private constructor(
    readonly file: string,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    /** Opened with `{ readOnly: true }`: derived views are then temporary (see ensureFeatures). */
    readonly readOnly = false,
    private readonly instanceKey = path.resolve(file),
  ) {
    // What ingest and queries work on: the connection stays inside the store folder.
    this.db = {
      conn,
      readOnly,
      all: (sql, params) => this.all(sql, params),
      one: (sql, params) => this.one(sql, params),
      prepared: (sql, params) => this.preparedAll(sql, params),
      connect: () => this.instance.connect(),
    };
  }

  private readonly db: StoreDb;

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
    for (const t of IMPORT_TABLES) await this.conn.run(`delete from ${t} where import_id > ?`, [top]);
  }

  /** Whether the running code already has the connection (a statement inside a scoped computation). */
  private readonly holding = new AsyncLocalStorage<true>();

  private turns: Promise<unknown> = Promise.resolve();

  /**
   * Runs `fn` with the connection to itself: one statement, or a whole computation (scoped
   * views, temporary tables, an import) whose statements then run inside without waiting.
   * A connection's temporary objects are shared by everything that runs on it, and DuckDB
   * does not take two statements at once on one connection, so callers take turns here.
   */
  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    if (this.holding.getStore()) return fn();
    const next = this.turns.then(() => this.holding.run(true, fn));
    this.turns = next.catch(() => undefined);
    return next;
  }

  all<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T[]> {
    return this.inTurn(async () => (await this.conn.runAndReadAll(sql, params)).getRowObjectsJS().map(normalizeRow) as T[]);
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
    for await (const chunk of this.dataChunks(sql, params)) yield chunk.getColumns();
  }

  /**
   * As `chunks`, DuckDB's own data chunks: for readers that take a vector's bytes as they
   * are (a BLOB column's items without decoding them to strings).
   */
  async *dataChunks(sql: string, params: DuckDBValue[] = []): AsyncGenerator<DuckDBDataChunk> {
    const conn = await this.instance.connect();
    try {
      const result = await conn.stream(sql, params);
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) yield chunk;
    } finally {
      conn.closeSync();
    }
  }

  async one<T = Record<string, unknown>>(sql: string, params: DuckDBValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /**
   * Creates (or refreshes) the views the store derives from its rollouts:
   * `rollout_features` (with the answer-in-context findings) and `rollout_failure_modes`.
   * Temporary on a read-only store. Call it before reading them; it is cheap once done.
   */
  ensureDerivedViews(): Promise<void> {
    // Stores sharing the instance (each view of the editor opens its own) refresh the same
    // views and answer-in-context rows: one at a time, or a row is checked twice.
    return this.inTurn(() => inInstanceTurn(this.instanceKey, () => ensureDerivedViews(this.db)));
  }

  /**
   * Runs `fn` with the `rollouts` and `steps` views (and the views over them) narrowed to a
   * scope. Other callers of this store wait until `fn` is done.
   */
  withScopedViews<T>(scope: Scope, fn: () => Promise<T>): Promise<T> {
    return this.inTurn(() => withScopedViews(this.db, scope, fn));
  }

  /** Runs `fn` with temporary tables made from queries; they are dropped after. Other callers of this store wait until `fn` is done. */
  withTempTables<T>(tables: TempTable[], fn: () => Promise<T>): Promise<T> {
    return this.inTurn(() => withTempTables(this.db, tables, fn));
  }

  /** A temporary table made from a query, kept while the store is open (an index a view reads again and again). */
  createTempTable(table: TempTable): Promise<void> {
    return this.inTurn(() => createTempTable(this.db, table));
  }

  /** The column names (lower case) a query returns. */
  columnsOf(select: string): Promise<string[]> {
    return this.inTurn(() => columnsOf(this.db, select));
  }

  /**
   * Runs a statement on a table the store keeps for another module (a cache such as the
   * judges' verdicts: `create table if not exists …`, `insert or replace …`). Rollout data
   * is written by import only.
   */
  execute(sql: string, params: DuckDBValue[] = []): Promise<void> {
    return this.inTurn(async () => void (await this.conn.run(sql, params)));
  }

  /**
   * Imports files and directories. The whole command lands or nothing does: rows are
   * appended in bounded chunks inside one transaction (DuckDB writes full row groups
   * straight to the file, so memory stays bounded), under fresh import ids that the views
   * show only once the imports table records them, in the same transaction. A crash
   * loses the uncommitted transaction; a failure rolls it back.
   */
  import(paths: string[], opts: ImportOptions = {}): Promise<ImportSummary> {
    this.ingest ??= new Ingest(this.db);
    const ingest = this.ingest;
    return this.inTurn(() => ingest.import(paths, opts));
  }

  listRollouts(q: ListQuery = {}): Promise<RolloutSummary[]> {
    return listRollouts(this.db, q);
  }

  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  /**
   * Runs a statement prepared once per store (point lookups: planning dominates their
   * cost). A prepared statement holds one set of parameters: calls take turns like all.
   */
  private preparedAll<T>(sql: string, params: DuckDBValue[]): Promise<T[]> {
    return this.inTurn(async () => {
      let stmt = this.prepared.get(sql);
      if (!stmt) {
        stmt = await this.conn.prepare(sql);
        this.prepared.set(sql, stmt);
      }
      stmt.bind(params);
      return (await stmt.runAndReadAll()).getRowObjectsJS().map(normalizeRow) as T[];
    });
  }

  getRollout(id: number): Promise<{ rollout: RolloutRow; steps: StepRow[] } | null> {
    return getRollout(this.db, id);
  }

  counts(): Promise<{ runs: number; rollouts: number; steps: number; groups: number; imports: number; quarantined: number }> {
    return counts(this.db);
  }

  /**
   * Calls `fn` when another process asks for the store (it found it locked and waits): a
   * holder that keeps it open between requests closes it then. Returns the unsubscribe.
   */
  onReleaseRequest(fn: () => void): () => void {
    return this.file === ':memory:' ? () => undefined : watchReleaseRequests(this.file, fn);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stmt of this.prepared.values()) stmt.destroySync();
    this.prepared.clear();
    this.ingest?.close();
    this.conn.closeSync();
    releaseInstance(this.instanceKey);
  }

  private closed = false;
}

/**
 * The DuckDB side of a rollout store: one instance per store file per process, each store
 * with its own connection. Only the store folder sees a connection (see StoreDb).
 */
import { existsSync, rmSync, unwatchFile, watchFile, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import { loadDuckDB } from './duckdb';
import { sqlString } from './importers/bulkSql';

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

export async function acquireInstance(file: string, readOnly: boolean): Promise<{ instance: DuckDBInstance; first: boolean; key: string }> {
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
  const ready = createInstance(file, readOnly).catch((err: Error) => {
    instances.delete(key);
    const msg = err.message;
    if (/lock/i.test(msg)) throw new Error(`${file}: the rollout store is open in another process (${msg.split('\n')[0]}), which did not let go of it within ${(lockWaitMs(readOnly) / 1000).toFixed(0)} s (the viewers and the editor's explorer do when asked; an import or other command holds it until it ends). Close it there, then retry.`);
    throw new Error(`${file}: cannot open the rollout store: ${msg.split('\n')[0]}`);
  });
  const entry: { ready: Promise<DuckDBInstance>; instance?: DuckDBInstance; refs: number; readOnly: boolean } = { ready, refs: 1, readOnly };
  instances.set(key, entry);
  entry.instance = await ready;
  return { instance: entry.instance, first: true, key };
}

/**
 * A file beside the store by which a process that finds it locked asks the one holding it to
 * let go: the viewers (`evotrainer view`, the editor's explorer) hold the store between
 * requests and close it when this file appears (see onReleaseRequest).
 */
export function releaseRequestFile(file: string): string {
  return `${path.resolve(file)}.release`;
}

/**
 * How long an open waits for a store another process holds: a writer (an import, a command)
 * EVOTRAINER_STORE_WAIT_MS, default 10 s; a reader (a hover, which must answer at once) no
 * longer than a viewer takes to let go.
 */
function lockWaitMs(readOnly: boolean): number {
  const v = Number(process.env.EVOTRAINER_STORE_WAIT_MS);
  const wait = Number.isFinite(v) && v >= 0 ? v : 10_000;
  return readOnly ? Math.min(wait, 1_000) : wait;
}

/**
 * Opens the DuckDB instance; when another process holds the file, asks it to let go (the
 * release request file) and tries again until it does or the wait is over.
 */
async function createInstance(file: string, readOnly: boolean): Promise<DuckDBInstance> {
  const { DuckDBInstance } = loadDuckDB();
  const settings = { memory_limit: '1GB', threads: '2', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };
  const open = () => (readOnly || file === ':memory:' ? DuckDBInstance.create(file, { ...settings, ...(readOnly ? { access_mode: 'READ_ONLY' } : {}) }) : attachWritable(file, settings));
  const deadline = performance.now() + lockWaitMs(readOnly);
  let asked = false;
  try {
    for (;;) {
      try {
        return await open();
      } catch (err) {
        if (file === ':memory:' || !/lock/i.test((err as Error).message) || performance.now() >= deadline) throw err;
        if (!asked) {
          try {
            writeFileSync(releaseRequestFile(file), `${process.pid}\n`);
            asked = true;
          } catch {
            // a read-only folder: wait all the same
          }
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    }
  } finally {
    if (asked) rmSync(releaseRequestFile(file), { force: true });
  }
}

/**
 * Rows per row group of what a writable store writes (DuckDB's default is 122,880): rollout
 * rows are kilobytes each, and a statement holds the row group it is filling in memory
 * until it is whole, so a default one of an insert lane is near a gigabyte, which the
 * buffer pool must spill to its temporary files and read back. Smaller ones are written as
 * they fill: the bulk import of 1M prime-rl rollouts took 48.6 s, 88.6 s of CPU and 1,081 MB
 * of RSS with the default, 39.8 s, 75.7 s and 827 MB with these. A setting of the attached
 * file, not kept in it: row groups written before keep their size.
 */
export const ROW_GROUP_ROWS = 16_384;

/**
 * A writable store: an in-memory instance with the file attached (an option of ATTACH only
 * sets the row group size, see ROW_GROUP_ROWS) as every connection's default database, its
 * temporary files beside it (as when DuckDB opens the file itself).
 */
async function attachWritable(file: string, settings: Record<string, string>): Promise<DuckDBInstance> {
  const { DuckDBInstance } = loadDuckDB();
  const instance = await DuckDBInstance.create(':memory:', { ...settings, temp_directory: `${path.resolve(file)}.tmp` });
  try {
    const conn = await instance.connect();
    try {
      await conn.run(`attach ${sqlString(path.resolve(file))} as store (row_group_size ${ROW_GROUP_ROWS})`);
    } finally {
      conn.closeSync();
    }
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  const connect = instance.connect.bind(instance);
  // Each connection starts on the in-memory database: its statements go to the store's.
  instance.connect = async () => {
    const conn = await connect();
    try {
      await conn.run('use store');
    } catch (err) {
      conn.closeSync();
      throw err;
    }
    return conn;
  };
  return instance;
}

/**
 * Calls `fn` whenever another process asks this one to let go of the store `file` (see
 * releaseRequestFile), including a request already waiting. Returns the unsubscribe.
 */
export function watchReleaseRequests(file: string, fn: () => void): () => void {
  const request = releaseRequestFile(file);
  const listener = (cur: Stats) => {
    if (cur.nlink > 0) fn();
  };
  watchFile(request, { interval: 150, persistent: false }, listener);
  if (existsSync(request)) queueMicrotask(fn);
  return () => unwatchFile(request, listener);
}

export function releaseInstance(key: string): void {
  const e = instances.get(key);
  if (!e) return;
  if (--e.refs > 0) return;
  instances.delete(key);
  if (e.instance) e.instance.closeSync();
  else void e.ready.then((i) => i.closeSync()).catch(() => undefined);
}

const instanceTurns = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after the work queued before it on the same instance (stores on one file
 * writing the same derived rows and views from their own connections).
 */
export function inInstanceTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const next = (instanceTurns.get(key) ?? Promise.resolve()).then(fn);
  const settled = next.catch(() => undefined);
  instanceTurns.set(key, settled);
  void settled.then(() => {
    if (instanceTurns.get(key) === settled) instanceTurns.delete(key);
  });
  return next;
}

/**
 * What the store's own modules (ingest, queries) work on: the connection and the row
 * readers. Never handed outside src/core/store.
 */
export interface StoreDb {
  readonly conn: DuckDBConnection;
  readonly readOnly: boolean;
  all<T = Record<string, unknown>>(sql: string, params?: DuckDBValue[]): Promise<T[]>;
  one<T = Record<string, unknown>>(sql: string, params?: DuckDBValue[]): Promise<T | undefined>;
  /** A point lookup through a statement prepared once per store. */
  prepared<T>(sql: string, params: DuckDBValue[]): Promise<T[]>;
  /** A further connection to the same instance (a statement that runs beside the store's own); the caller closes it. */
  connect(): Promise<DuckDBConnection>;
}

/** DuckDB hands back BIGINT as bigint; the store's numbers all fit in a double. */
export function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(row)) if (typeof v === 'bigint') row[k] = Number(v);
  return row;
}

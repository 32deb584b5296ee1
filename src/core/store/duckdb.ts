/**
 * The embedded rollout store runs on DuckDB. It is loaded on first use only, never at
 * extension activation: its native binding is tens of megabytes.
 */
type DuckDBApi = typeof import('@duckdb/node-api');

let api: DuckDBApi | undefined;

export function loadDuckDB(): DuckDBApi {
  if (!api) {
    // A plain require keeps the native package out of every bundle (it is external).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    api = require('@duckdb/node-api') as DuckDBApi;
  }
  return api;
}

export interface StoreProbe {
  version: string;
  /** Whether JSON and Parquet readers (used by the importers) are available. */
  json: boolean;
  parquet: boolean;
}

/** Opens an in-memory database and runs a query touching the readers importers need. */
export async function probeStore(): Promise<StoreProbe> {
  const { DuckDBInstance } = loadDuckDB();
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const reader = await conn.runAndReadAll(`select version() as v`);
    const version = String(reader.getRowObjects()[0]?.['v'] ?? 'unknown');
    // Both readers are built into the binding; a build without them would try to fetch
    // extensions from the network, which clusters and CI often do not have.
    const json = await canRun(conn, `select json('{"a":1}')`);
    const parquet = await canRun(conn, `copy (select 1 as x) to '/dev/null' (format parquet)`);
    return { version, json, parquet };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

async function canRun(conn: { run(sql: string): Promise<unknown> }, sql: string): Promise<boolean> {
  try {
    await conn.run(sql);
    return true;
  } catch {
    return false;
  }
}

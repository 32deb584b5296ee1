/**
 * Streams the rows of columnar dump files (Parquet) for the importers, through DuckDB.
 * Rows come one result chunk at a time (DuckDB's vector size, 2048 rows), so a dump
 * of any size is read in bounded memory: nothing materializes the whole file.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { TableReader } from './importers/types';
import { loadDuckDB } from './duckdb';

export interface ClosableTableReader extends TableReader {
  /** Closes the in-memory database; a reader is not used after this. */
  close(): void;
}

/**
 * A TableReader backed by an in-memory DuckDB, opened on first use. Each file is read on
 * its own connection, so two files can be streamed at once.
 *
 * Values are DuckDB's plain JS conversion: strings, numbers for DOUBLE / FLOAT / INTEGER
 * (NaN kept as NaN), bigint for BIGINT, null, arrays for LIST columns, objects for STRUCT
 * columns. BIGINT stays bigint so that an importer can tell an integer column (pandas
 * writes every int as int64) from a float one, where a value like 1.0 reads back as 1.
 */
export function duckdbTableReader(): ClosableTableReader {
  let instance: Promise<DuckDBInstance> | undefined;
  let closed = false;

  const open = (): Promise<DuckDBInstance> => {
    if (closed) return Promise.reject(new Error('the table reader is closed'));
    instance ??= loadDuckDB().DuckDBInstance.create(':memory:');
    return instance;
  };

  return {
    async *readParquet(file: string): AsyncGenerator<Record<string, unknown>> {
      const db = await open();
      const conn: DuckDBConnection = await db.connect();
      try {
        // The path is a bound parameter, never spliced into the SQL text.
        const result = await conn.stream('select * from read_parquet($1)', [file]);
        for await (const rows of result.yieldRowObjectJs()) {
          for (const row of rows) yield row;
        }
      } finally {
        conn.closeSync();
      }
    },
    close(): void {
      if (closed) return;
      closed = true;
      const pending = instance;
      instance = undefined;
      // Closing an instance still being created waits for it; errors are moot by then.
      pending?.then((db) => db.closeSync()).catch(() => undefined);
    },
  };
}

/**
 * Rows given to a DuckDB appender a data chunk at a time, for the rows document workers
 * prepared (see documentWorkers.ts). Appending value by value costs one native call per
 * value (a trajectory's hundreds of steps take thousands); here values gather per column
 * and each column goes into its vector in one pass. Texts may come as UTF-8 bytes (as
 * they crossed threads): they are copied into the vector as they are, never made into
 * JavaScript strings on this thread.
 */
import type { DuckDBAppender, DuckDBType, DuckDBVector } from '@duckdb/node-api';
import { loadDuckDB } from './duckdb';

/** A value of one column: what the appender takes for the column's type, or a VARCHAR's UTF-8 bytes. */
export type ChunkValue = string | number | bigint | boolean | null | Uint8Array;

export class ChunkRows {
  private readonly types: DuckDBType[];
  private columns: ChunkValue[][];
  private rows = 0;
  /** Rows the appender took value by value since it last flushed: they go first (see push). */
  private rowsAppended = false;

  constructor(private readonly appender: DuckDBAppender) {
    this.types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
    this.columns = this.types.map(() => []);
  }

  /** Notes that the appender took a row value by value (a record this thread parsed). */
  appendedRow(): void {
    if (this.rows) this.flush();
    this.rowsAppended = true;
  }

  /** One row, a value per column in the table's order. */
  push(values: readonly ChunkValue[]): void {
    // The appender keeps rows given value by value in a chunk of its own until it fills;
    // flushed first, they stay ahead of these (row order is import order).
    if (this.rowsAppended) {
      this.appender.flushSync();
      this.rowsAppended = false;
    }
    const columns = this.columns;
    for (let k = 0; k < columns.length; k++) columns[k]!.push(values[k]!);
    if (++this.rows === CHUNK_ROWS) this.flush();
  }

  /** Hands the gathered rows to the appender (which writes them to the table when it flushes or closes). */
  flush(): void {
    if (!this.rows) return;
    const { DuckDBDataChunk, DuckDBVector, DuckDBBlobType, DuckDBBlobValue } = loadDuckDB();
    const chunk = DuckDBDataChunk.create(this.types, this.rows);
    this.columns.forEach((values, k) => {
      if (!values.some((v) => v instanceof Uint8Array)) {
        chunk.setColumnValues(k, values as Exclude<ChunkValue, Uint8Array>[]);
        return;
      }
      // A VARCHAR vector written through a BLOB view of it: the bytes go in as they are
      // (DuckDB checks they are UTF-8, which they are: Buffer.from wrote them).
      const raw = (chunk.getColumnVector(k) as unknown as { vector: Parameters<typeof DuckDBVector.create>[0] }).vector;
      const bytes: DuckDBVector = DuckDBVector.create(raw, this.rows, DuckDBBlobType.instance);
      values.forEach((v, i) => bytes.setItem(i, v === null ? null : new DuckDBBlobValue(v instanceof Uint8Array ? v : Buffer.from(String(v), 'utf8'))));
      bytes.flush();
    });
    this.appender.appendDataChunk(chunk);
    this.columns = this.types.map(() => []);
    this.rows = 0;
  }
}

/** DuckDB's vector size: the most rows a data chunk holds. */
const CHUNK_ROWS = 2048;

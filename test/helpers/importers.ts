import type { Importer, ReadOptions } from '../../src/core/store/importers/types';
import { isBad, type BadRecord, type ImportedRecord } from '../../src/core/store/rows';

/** Reads a whole file through an importer, splitting good and bad records. */
export async function readAll(importer: Importer, file: string, opts: Partial<ReadOptions> = {}): Promise<{ good: ImportedRecord[]; bad: BadRecord[] }> {
  const good: ImportedRecord[] = [];
  const bad: BadRecord[] = [];
  const tables = opts.tables ?? { readParquet: () => { throw new Error('no parquet here'); } };
  for await (const item of importer.read(file, { ...opts, tables })) (isBad(item) ? bad : good).push(item as never);
  return { good, bad };
}

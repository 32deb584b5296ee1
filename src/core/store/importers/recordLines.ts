import { ImportError, type ImporterItem, type RolloutRecord } from '../rows';
import { readJsonLines } from './jsonLines';
import type { ReadOptions } from './types';
import { clip, describeType, isRecord } from './util';

/**
 * Streams a JSONL file of one JSON object per line, each turned into a record by
 * `toRecord` (or into the reason it is bad: a bad record with its line, never a throw).
 */
export async function* readRecordLines(file: string, opts: ReadOptions, toRecord: (v: Record<string, unknown>) => RolloutRecord | string): AsyncGenerator<ImporterItem> {
  try {
    for await (const line of readJsonLines(file, opts.startOffset, opts.startLine, opts.onChunk)) {
      const at = { file, line: line.line, endOffset: line.endOffset };
      if (line.error !== undefined) {
        yield { error: new ImportError(file, line.line, `not valid JSON: ${line.error}`, line.raw), at };
        continue;
      }
      const value = line.value;
      const result = isRecord(value) ? toRecord(value) : `expected a JSON object per line, got ${describeType(value)}`;
      if (typeof result === 'string') yield { error: new ImportError(file, line.line, result, clip(JSON.stringify(value))), at };
      else yield { record: result, at };
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(file, null, `cannot read the file: ${(err as Error).message}`);
  }
}

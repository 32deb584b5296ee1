import { readJsonLines } from '../importers/jsonLines';
import { isRecord } from '../importers/util';
import type { CurveItem, CurvePoint, CurveReader } from './types';

/**
 * verl's file logger (`trainer.logger=['file']`, `verl.utils.tracking.FileLogger`): JSONL
 * at `$VERL_FILE_LOGGER_PATH` (default `<project>/<experiment>.jsonl`), one line per step,
 * `{"step": 12, "data": {"actor/entropy": 0.41, …}}`. Python's json.dumps writes NaN and
 * Infinity as bare tokens; they read as not-a-number (kept).
 */
const HEAD = /^\s*\{\s*"step"\s*:\s*\d+\s*,\s*"data"\s*:\s*\{/;

export const verlFileReader: CurveReader = {
  format: 'verl-file',
  description: "verl's file logger: JSONL of {\"step\": N, \"data\": {metric: value}}",
  matches(file, head) {
    return file.endsWith('.jsonl') && HEAD.test(head);
  },
  async *read(file, { startOffset, startLine, onChunk }): AsyncGenerator<CurveItem> {
    for await (const l of readJsonLines(file, startOffset, startLine, onChunk)) {
      const at = { line: l.line, endOffset: l.endOffset };
      if (l.error !== undefined) {
        // The parser's message quotes the line: the line goes out escaped instead (log text is untrusted).
        yield { bad: `not JSON: ${JSON.stringify((l.raw ?? '').slice(0, 80))}`, at };
        continue;
      }
      const rec = l.value;
      if (!isRecord(rec) || typeof rec.step !== 'number' || !Number.isInteger(rec.step) || !isRecord(rec.data)) {
        yield { bad: 'expected {"step": <integer>, "data": {…}}, as verl\'s file logger writes', at };
        continue;
      }
      const step = rec.step;
      const points: CurvePoint[] = [];
      for (const [metric, v] of Object.entries(rec.data)) {
        // Python's NaN reads back as null (see readJsonLines): a value that was logged.
        if (typeof v === 'number') points.push({ step, metric, value: v, wallTime: null });
        else if (v === null) points.push({ step, metric, value: NaN, wallTime: null });
        else if (typeof v === 'boolean') points.push({ step, metric, value: v ? 1 : 0, wallTime: null });
      }
      if (points.length) yield { points, at };
    }
  },
};

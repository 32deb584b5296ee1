import { createReadStream } from 'node:fs';
import { parsePythonJson } from './pythonJson';

export interface JsonLine {
  /** Parsed value, or undefined when the line is not valid JSON (see `error`). */
  value?: unknown;
  error?: string;
  /** The raw line (only kept for bad lines, for the quarantine table). */
  raw?: string;
  /** 1-based line number. */
  line: number;
  /** Byte offset just after this line's newline: where a follower resumes. */
  endOffset: number;
}

const NL = 0x0a;

/**
 * Streams a JSONL file line by line from `startOffset`, memory bounded by the longest
 * line (10 MB lines are fine). Blank lines are skipped. `onChunk` sees every byte read
 * (the store hashes them in the same pass). Python's bare NaN / Infinity tokens (what
 * json.dumps writes for non-finite floats) read as null. A last line with no newline is
 * taken only when it parses: a run still writing it is "not yet", not an error.
 */
export async function* readJsonLines(file: string, startOffset = 0, startLine = 1, onChunk?: (bytes: Buffer) => void): AsyncGenerator<JsonLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let offset = startOffset;
  let line = startLine;
  const stream = createReadStream(file, { start: startOffset, highWaterMark: 1 << 20 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onChunk?.(chunk);
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, from);
      if (nl === -1) break;
      const piece = chunk.subarray(from, nl);
      const buf = pending.length ? Buffer.concat([...pending, piece], pendingBytes + piece.length) : piece;
      pending = [];
      pendingBytes = 0;
      offset += buf.length + 1;
      const parsed = parseLine(buf, line, offset);
      if (parsed) yield parsed;
      line++;
      from = nl + 1;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes) {
    const buf = Buffer.concat(pending, pendingBytes);
    const parsed = parseLine(buf, line, offset + buf.length);
    if (parsed && parsed.error === undefined) yield parsed;
  }
}

function parseLine(buf: Buffer, line: number, endOffset: number): JsonLine | null {
  let text = buf.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return null;
  try {
    return { value: JSON.parse(text), line, endOffset };
  } catch (err) {
    // Python trainers write json.dumps output: a NaN or infinite float is a bare token there.
    const python = parsePythonJson(text);
    if (python) return { value: python.value, line, endOffset };
    return { error: (err as Error).message, raw: text.length > 65536 ? text.slice(0, 65536) : text, line, endOffset };
  }
}

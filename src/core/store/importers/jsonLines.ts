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
const CR = 0x0d;
/** The longest line read: past it the line is a bad record (memory stays bounded whatever the input). */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * Streams a JSONL file line by line from `startOffset`, memory bounded by the longest
 * line (10 MB lines are fine; one over `maxLineBytes` is reported as a bad line and
 * skipped without being held). Lines end with LF, CRLF or a lone CR; a UTF-8 byte-order
 * mark before the first line is dropped. Blank lines are skipped. `onChunk` sees every
 * byte read (the store hashes them in the same pass, and may throw to stop the read).
 * Python's bare NaN / Infinity tokens (what json.dumps writes for non-finite floats) read
 * as null. A last line with no line end is taken only when it parses: a run still
 * writing it is "not yet", not an error.
 */
export async function* readJsonLines(file: string, startOffset = 0, startLine = 1, onChunk?: (bytes: Buffer) => void, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<JsonLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes of the current line when it is over the limit (then nothing of it is held). */
  let overLong = 0;
  let offset = startOffset;
  let line = startLine;
  /** The previous chunk ended in CR: an LF starting this one belongs to that line end. */
  let afterCR = false;
  const stream = createReadStream(file, { start: startOffset, highWaterMark: 1 << 20 });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    onChunk?.(chunk);
    let from = 0;
    if (afterCR && chunk.length && chunk[0] === NL) {
      from = 1;
      offset++;
    }
    afterCR = false;
    let nextNL = chunk.indexOf(NL, from);
    let nextCR = chunk.indexOf(CR, from);
    for (;;) {
      if (nextNL !== -1 && nextNL < from) nextNL = chunk.indexOf(NL, from);
      if (nextCR !== -1 && nextCR < from) nextCR = chunk.indexOf(CR, from);
      const end = nextNL === -1 ? nextCR : nextCR === -1 ? nextNL : Math.min(nextNL, nextCR);
      if (end === -1) break;
      // CRLF is one line end; a CR at the chunk's end may be followed by LF in the next chunk.
      const crlf = chunk[end] === CR && end + 1 < chunk.length && chunk[end + 1] === NL;
      if (chunk[end] === CR && end + 1 === chunk.length) afterCR = true;
      const terminator = crlf ? 2 : 1;
      const piece = chunk.subarray(from, end);
      let parsed: JsonLine | null;
      const lineStart = offset;
      if (overLong) {
        offset += overLong + piece.length + terminator;
        parsed = tooLong(line, overLong + piece.length, maxLineBytes, offset);
        overLong = 0;
      } else {
        const buf = pending.length ? Buffer.concat([...pending, piece], pendingBytes + piece.length) : piece;
        offset += buf.length + terminator;
        parsed = buf.length > maxLineBytes ? tooLong(line, buf.length, maxLineBytes, offset) : parseLine(buf, line, offset, lineStart === 0);
      }
      pending = [];
      pendingBytes = 0;
      if (parsed) yield parsed;
      line++;
      from = end + terminator;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      if (overLong || pendingBytes + rest.length > maxLineBytes) {
        overLong += pendingBytes + rest.length;
        pending = [];
        pendingBytes = 0;
      } else {
        pending.push(rest);
        pendingBytes += rest.length;
      }
    }
  }
  if (overLong) yield tooLong(line, overLong, maxLineBytes, offset + overLong);
  else if (pendingBytes) {
    const buf = Buffer.concat(pending, pendingBytes);
    const parsed = parseLine(buf, line, offset + buf.length, offset === 0);
    if (parsed && parsed.error === undefined) yield parsed;
  }
}

function tooLong(line: number, bytes: number, max: number, endOffset: number): JsonLine {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 1024 * 1024 ? 3 : 0)} MiB`;
  return { error: `the line is ${mib(bytes)} long, over the ${mib(max)} a line may hold; it was not read (split the record, or drop it with --on-error skip)`, raw: '', line, endOffset };
}

function parseLine(buf: Buffer, line: number, endOffset: number, fileStart: boolean): JsonLine | null {
  let text = buf.toString('utf8');
  // A byte-order mark (Windows editors write one) is not part of the first record.
  if (fileStart && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Watches JSONL bytes, fed in any chunks, for a record that names one top-level key twice.
 * Such a record means its last value (as JSON.parse and Python's json read it), but
 * DuckDB's reader keeps the first: the bulk path sends a file where this finds one to the
 * streaming path, so both paths store the same rows. Strings are skipped natively
 * (indexOf), so the cost is per token, not per byte. A malformed line can only make it
 * report a duplicate that is not there, which costs speed, never a wrong row.
 */
export class DuplicateKeyScan {
  found = false;
  private depth = 0;
  private inString = false;
  private escapeNext = false;
  private isKey = false;
  private expectKey = false;
  private key = '';
  private keys = new Set<string>();

  feed(chunk: Buffer): void {
    const n = chunk.length;
    let i = 0;
    while (i < n && !this.found) {
      if (this.inString) {
        if (this.escapeNext) {
          this.escapeNext = false;
          if (this.isKey) this.key += chunk.toString('latin1', i, i + 1);
          i++;
          continue;
        }
        const q = chunk.indexOf(QUOTE, i);
        const end = q === -1 ? n : q;
        let j = end - 1;
        while (j >= i && chunk[j] === BACKSLASH) j--;
        const oddBackslashes = (end - 1 - j) % 2 === 1;
        if (this.isKey && this.key.length < 4096) this.key += chunk.toString('latin1', i, end);
        if (q === -1) {
          this.escapeNext = oddBackslashes;
          return;
        }
        i = q + 1;
        if (oddBackslashes) {
          if (this.isKey) this.key += '"';
          continue;
        }
        this.inString = false;
        if (this.isKey) {
          if (this.keys.has(this.key)) this.found = true;
          this.keys.add(this.key);
        }
        continue;
      }
      const c = chunk[i++]!;
      if (c === QUOTE) {
        this.inString = true;
        this.isKey = this.depth === 1 && this.expectKey;
        this.expectKey = false;
        this.key = '';
      } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (++this.depth === 1) this.keys.clear();
        this.expectKey = c === 0x7b && this.depth === 1;
      } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) this.depth--;
      else if (c === 0x2c /* , */) this.expectKey = this.depth === 1;
      else if (c === NL || c === CR) this.depth = 0; // a line end outside a string ends the record, whatever came before
    }
  }
}

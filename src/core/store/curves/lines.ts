import { createReadStream } from 'node:fs';

/** Longest line kept whole; the rest of a longer one is dropped (and reported by the reader). */
export const MAX_LINE_BYTES = 1 << 20;

export interface TextLine {
  text: string;
  /** 1-based. */
  line: number;
  endOffset: number;
  /** The line was longer than MAX_LINE_BYTES: `text` is its beginning only. */
  cut: boolean;
}

/**
 * The complete lines of a text file from `startOffset`, memory bounded by MAX_LINE_BYTES
 * whatever the file holds (a log can carry megabytes on one line). A last line without a
 * newline is still being written: it is not yielded, so a follower reads it next time.
 */
export async function* completeLines(file: string, startOffset: number, startLine: number, onChunk?: (bytes: Buffer) => void): AsyncGenerator<TextLine> {
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let lineBytes = 0;
  let offset = startOffset;
  let line = startLine;
  const keep = (piece: Buffer) => {
    lineBytes += piece.length;
    const room = MAX_LINE_BYTES - keptBytes;
    if (room <= 0) return;
    const part = piece.length > room ? piece.subarray(0, room) : piece;
    kept.push(part);
    keptBytes += part.length;
  };
  for await (const chunk of createReadStream(file, { start: startOffset, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    onChunk?.(chunk);
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      keep(chunk.subarray(from, nl));
      offset += lineBytes + 1;
      yield { text: Buffer.concat(kept, keptBytes).toString('utf8'), line: line++, endOffset: offset, cut: lineBytes > MAX_LINE_BYTES };
      kept = [];
      keptBytes = 0;
      lineBytes = 0;
      from = nl + 1;
    }
    if (from < chunk.length) keep(Buffer.from(chunk.subarray(from)));
  }
}

/** Terminal control sequences (colour, cursor, OSC titles) a log carries when a TTY was assumed. */
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/** Text with terminal escapes and other control characters removed (tabs kept). */
export function plainText(s: string): string {
  return s.replace(ANSI, '').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
}

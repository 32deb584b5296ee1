import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { isCompressed, readBytes } from './compressed';

/** sha256 state after the first `length` bytes of a file, uncompressed when it is compressed (not yet digested, so it can go on). */
export async function hashPrefix(file: string, length: number): Promise<Hash> {
  const h = createHash('sha256');
  if (length <= 0) return h;
  if (!isCompressed(file)) {
    for await (const chunk of createReadStream(file, { start: 0, end: length - 1 }) as AsyncIterable<Buffer>) h.update(chunk);
    return h;
  }
  // A compressed file's offsets are the uncompressed text's.
  let left = length;
  for await (const chunk of readBytes(file)) {
    h.update(chunk.length > left ? chunk.subarray(0, left) : chunk);
    left -= chunk.length;
    if (left <= 0) break;
  }
  return h;
}

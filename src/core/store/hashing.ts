import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** sha256 state after the first `length` bytes of a file (not yet digested, so it can go on). */
export async function hashPrefix(file: string, length: number): Promise<Hash> {
  const h = createHash('sha256');
  if (length > 0) for await (const chunk of createReadStream(file, { start: 0, end: length - 1 }) as AsyncIterable<Buffer>) h.update(chunk);
  return h;
}

/**
 * Gzip-compressed dumps (`.jsonl.gz`, `.json.gz`, `.traj.gz`, `.traj.json.gz`), read as
 * the files they compress: a layout is recognized by the uncompressed name and the first
 * uncompressed bytes, lines and byte offsets (record references, where a later import
 * resumes) are those of the uncompressed text, and the content hash is the uncompressed
 * bytes' (a dump and its .gz copy are the same import). They are streamed, never
 * decompressed to disk; the bulk path (DuckDB reading files itself) takes plain files only.
 * Other compressions (zstd, bzip2, xz) are listed with the command that decompresses them
 * (see importers/index.ts): Node 20 has no decoder for them.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { pipeline } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { constants as zlib, createGunzip, gunzip, gunzipSync } from 'node:zlib';
import { shQuote } from '../jobs/quote';
import { documentTooLarge } from './importers/documentSize';
import { ImportError } from './rows';

/** A data file compressed with gzip, which import reads through gunzip. */
export const GZIP_DATA_FILE = /\.(jsonl|json|traj)\.gz$/;

export function isGzip(file: string): boolean {
  return GZIP_DATA_FILE.test(file);
}

/** The name a file's layout is recognized by: a gzip-compressed data file's without `.gz`. */
export function uncompressedName(file: string): string {
  return isGzip(file) ? file.slice(0, -3) : file;
}

/** What a gzip file that cannot be decompressed is: where, what zlib said, and how to check it. */
export function gzipError(file: string, err: unknown, line: number | null = null): ImportError {
  const why = (err as Error).message ?? String(err);
  const plain = uncompressedName(file);
  return new ImportError(file, line, `not a readable gzip file (${why}); check it with: gzip -t ${shQuote(file)}; what it holds up to the damage can be written out with: gzip -dc ${shQuote(file)} > ${shQuote(plain)} (then import that)`);
}

/**
 * The uncompressed size a gzip file declares (its trailer's ISIZE: the size modulo 4 GiB of
 * its last member), or null when it is too short to have one. An estimate to refuse a
 * document too large before decompressing it; decompression itself is bounded too.
 */
export function gzipDeclaredSize(file: string): number | null {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const size = fstatSync(fd).size;
    if (size < 18) return null;
    const tail = Buffer.alloc(4);
    readSync(fd, tail, 0, 4, size - 4);
    return tail.readUInt32LE(0);
  } finally {
    closeSync(fd);
  }
}

/**
 * The size a whole document is read ahead by (see ingest.ts): a gzip file's declared
 * uncompressed size (a damaged file's trailer is noise: decompressing holds it to the
 * limit, see readDocumentSync), a plain file's `size`.
 */
export function documentBytes(file: string, size: number): number {
  return isGzip(file) ? Math.max(size, gzipDeclaredSize(file) ?? 0) : size;
}

function gunzipped(file: string, limit: number, err: unknown, out: Buffer | undefined): Buffer {
  if (out) return out;
  if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
    // The trailer's size when it is past the limit (it is the whole size of a one-member file).
    const declared = gzipDeclaredSize(file);
    throw declared !== null && declared > limit ? documentTooLarge(file, declared, limit, { uncompressed: true }) : documentTooLarge(file, limit + 1, limit, { atLeast: true });
  }
  throw gzipError(file, err);
}

/**
 * A whole document's bytes, uncompressed when it is gzip: more than `limit` of them (a
 * gzip file whose trailer understated its size) is documentTooLarge's error.
 */
export function readDocumentSync(file: string, limit: number): Buffer {
  const content = readFileSync(file);
  if (!isGzip(file)) return content;
  let out: Buffer | undefined;
  let err: unknown;
  try {
    out = gunzipSync(content, { maxOutputLength: Math.max(1, limit) });
  } catch (e) {
    err = e;
  }
  return gunzipped(file, limit, err, out);
}

/** readDocumentSync, read and decompressed on libuv's threads. */
export async function readDocument(file: string, limit: number): Promise<Buffer> {
  const content = await readFile(file);
  if (!isGzip(file)) return content;
  const out = await new Promise<{ out?: Buffer; err?: unknown }>((resolve) => gunzip(content, { maxOutputLength: Math.max(1, limit) }, (err, out) => resolve(err ? { err } : { out })));
  return gunzipped(file, limit, out.err, out.out);
}

/** A document's bytes, uncompressed when it is gzip (no limit: for importers read outside an import). */
export function readWhole(file: string): Buffer {
  const content = readFileSync(file);
  if (!isGzip(file)) return content;
  try {
    return gunzipSync(content);
  } catch (err) {
    throw gzipError(file, err);
  }
}

/**
 * The first uncompressed bytes of a gzip file: at least `bytes` of them (fewer when the
 * file holds fewer), and with `wholeFirstLine`, up to its first line's end or `maxBytes`.
 * Decompresses a prefix of the file, doubling it until that is enough.
 */
export function gzipHead(file: string, bytes: number, wholeFirstLine: boolean, maxBytes: number): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const size = fstatSync(fd).size;
    for (let take = 16 * 1024; ; take *= 2) {
      const n = Math.min(take, size);
      const compressed = Buffer.alloc(n);
      let got = 0;
      for (let r = 1; r > 0 && got < n; got += r) r = readSync(fd, compressed, got, n - got, got);
      let out: Buffer;
      try {
        // A prefix ends mid-stream: take what it decompresses to.
        out = gunzipSync(compressed.subarray(0, got), { finishFlush: zlib.Z_SYNC_FLUSH, maxOutputLength: 2 * maxBytes + 32 * 1024 * 1024 });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return Buffer.alloc(0);
        throw gzipError(file, err);
      }
      const nl = wholeFirstLine ? out.indexOf(0x0a) : -1;
      if (!wholeFirstLine) {
        if (out.length >= bytes || got >= size) return out.subarray(0, bytes);
      } else if (nl !== -1) return out.subarray(0, Math.max(bytes, nl + 1));
      else if (out.length >= maxBytes || got >= size) return out.subarray(0, maxBytes);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A file's bytes from `start`, in chunks: a plain file's from that offset, a gzip file's
 * uncompressed bytes from that uncompressed offset (those before it are decompressed and
 * dropped). A gzip file that cannot be decompressed ends the read with gzipError.
 */
export async function* readBytes(file: string, start = 0, highWaterMark = 1 << 20): AsyncGenerator<Buffer> {
  if (!isGzip(file)) {
    yield* createReadStream(file, { start, highWaterMark }) as AsyncIterable<Buffer>;
    return;
  }
  const raw = createReadStream(file, { highWaterMark });
  // Until the gunzip has begun, a missing or unreadable file is that, not a bad gzip.
  let opened = false;
  raw.once('open', () => (opened = true));
  const out = pipeline(raw, createGunzip({ chunkSize: highWaterMark }), () => undefined);
  let skip = start;
  try {
    for await (const chunk of out as AsyncIterable<Buffer>) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      yield skip ? chunk.subarray(skip) : chunk;
      skip = 0;
    }
  } catch (err) {
    throw opened ? gzipError(file, err) : err;
  } finally {
    raw.destroy();
  }
}

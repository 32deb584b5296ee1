/**
 * Compressed dumps (`.jsonl`, `.json`, `.traj`, `.traj.json` + `.gz`, `.zst`, `.bz2`,
 * `.xz`), read as the files they compress: a layout is recognized by the uncompressed name
 * and the first uncompressed bytes, lines and byte offsets (record references, where a
 * later import resumes) are those of the uncompressed text, and the content hash is the
 * uncompressed bytes' (a dump and its compressed copy are the same import). They are
 * streamed, never decompressed to disk: gzip by Node's zlib, zstd, bzip2 and xz by their
 * own programs (`zstd -dc`, …; Node 20 has no decoder for them), which a clear error asks
 * for when missing. The bulk path (DuckDB reading files itself) takes plain files only: it
 * would have to decompress each file twice (see the note in ingest.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, createReadStream, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { pipeline } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { constants as zlib, createGunzip, gunzip, gunzipSync } from 'node:zlib';
import { shQuote } from '../jobs/quote';
import { documentTooLarge } from './importers/documentSize';
import { ImportError } from './rows';

type Compression = 'gz' | 'zst' | 'bz2' | 'xz';

/** How far a decoder program's output is read ahead of its reader. */
const READ_AHEAD = 16 * 1024 * 1024;

/** Each compression's program: it tests (-t) and writes out (-dc) a file; zstd, bzip2 and xz are run to read one. */
const PROGRAMS: Record<Compression, { program: string; name: string; debian: string }> = {
  gz: { program: 'gzip', name: 'gzip', debian: 'gzip' },
  zst: { program: 'zstd', name: 'zstd', debian: 'zstd' },
  bz2: { program: 'bzip2', name: 'bzip2', debian: 'bzip2' },
  xz: { program: 'xz', name: 'xz', debian: 'xz-utils' },
};

/** A compressed data file, which import reads through its decoder. */
export const COMPRESSED_DUMP = /\.(jsonl|json|traj)\.(gz|zst|bz2|xz)$/;

function compressionOf(file: string): Compression | null {
  const m = COMPRESSED_DUMP.exec(file);
  return m ? (m[2] as Compression) : null;
}

export function isCompressed(file: string): boolean {
  return COMPRESSED_DUMP.test(file);
}

/** The name a file's layout is recognized by: a compressed data file's without its `.gz` (`.zst`, …). */
export function uncompressedName(file: string): string {
  const c = compressionOf(file);
  return c ? file.slice(0, -(c.length + 1)) : file;
}

/** What a compressed file that cannot be read is: where, what the decoder said, how to check it and recover what it holds. */
export function decompressError(file: string, why: string): ImportError {
  const c = compressionOf(file) ?? 'gz';
  const { program, name } = PROGRAMS[c];
  return new ImportError(
    file,
    null,
    `not a readable ${name} file (${why}); check it with: ${program} -t ${shQuote(file)}; what it holds up to the damage can be written out with: ${program} -dc ${shQuote(file)} > ${shQuote(uncompressedName(file))} (then import that)`,
  );
}

/** The decoder program is not installed: what to install, or how else to read the file. */
function missingProgram(file: string): ImportError {
  const { program, debian, name } = PROGRAMS[compressionOf(file)!];
  return new ImportError(file, null, `reading a ${name} file needs the ${program} program, which is not on PATH: install it (apt-get install ${debian}), or decompress the file where it is installed and import the result`);
}

/** A decoder's run as an error, or null when it ran well. */
function decoderFailure(file: string, r: { error?: Error; status: number | null; signal: NodeJS.Signals | null; stderr: string | Buffer }): ImportError | null {
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return missingProgram(file);
  if (r.error) return decompressError(file, r.error.message);
  if (r.status === 0) return null;
  const said = String(r.stderr).trim().split('\n').pop()?.replace(/^[^:]+:\s*/, '') ?? '';
  return decompressError(file, said || (r.signal ? `stopped by ${r.signal}` : `exit code ${r.status}`));
}

/**
 * The uncompressed size a gzip file declares (its trailer's ISIZE: the size modulo 4 GiB of
 * its last member), or null when it is too short to have one.
 */
function gzipDeclaredSize(file: string): number | null {
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
 * uncompressed size, another's `size` (a damaged file's trailer is noise: decompressing
 * holds it to the limit, see readDocumentSync).
 */
export function documentBytes(file: string, size: number): number {
  return compressionOf(file) === 'gz' ? Math.max(size, gzipDeclaredSize(file) ?? 0) : size;
}

/** The document over the limit: its declared size when that is past the limit (a one-member gzip's whole size), else "over the limit". */
function tooLarge(file: string, limit: number): ImportError {
  const declared = compressionOf(file) === 'gz' ? gzipDeclaredSize(file) : null;
  return declared !== null && declared > limit ? documentTooLarge(file, declared, limit, { uncompressed: true })! : documentTooLarge(file, limit + 1, limit, { atLeast: true })!;
}

/**
 * A whole document's bytes, uncompressed when it is compressed: more than `limit` of them is
 * documentTooLarge's error (checked as it decompresses: nothing over the limit is held).
 */
export function readDocumentSync(file: string, limit: number): Buffer {
  const c = compressionOf(file);
  if (!c) return readFileSync(file);
  const max = Math.max(1, limit);
  if (c === 'gz') {
    try {
      return gunzipSync(readFileSync(file), { maxOutputLength: max });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(file, limit);
      throw decompressError(file, (err as Error).message);
    }
  }
  const r = spawnSync(PROGRAMS[c].program, ['-dc', '--', file], { maxBuffer: max, stdio: ['ignore', 'pipe', 'pipe'] });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOBUFS') throw tooLarge(file, limit);
  const failed = decoderFailure(file, r);
  if (failed) throw failed;
  return r.stdout;
}

/** readDocumentSync, read and decompressed off this thread (libuv's threads, or the decoder's process). */
export async function readDocument(file: string, limit: number): Promise<Buffer> {
  const c = compressionOf(file);
  if (!c) return readFile(file);
  if (c === 'gz') {
    const content = await readFile(file);
    return new Promise<Buffer>((resolve, reject) =>
      gunzip(content, { maxOutputLength: Math.max(1, limit) }, (err, out) => {
        if (!err) resolve(out);
        else reject((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? tooLarge(file, limit) : decompressError(file, err.message));
      }),
    );
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of readBytes(file)) {
    n += chunk.length;
    if (n > limit) throw tooLarge(file, limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, n);
}

/** A document's bytes, uncompressed when it is compressed (no limit: for importers read outside an import). */
export function readWhole(file: string): Buffer {
  return readDocumentSync(file, 2 ** 31 - 1);
}

/**
 * A file's head as the first bytes `out` of its text give it: at least `bytes` (fewer when
 * the text holds fewer), and with `wholeFirstLine`, up to its first line's end or
 * `maxBytes`; null when `out` is not enough yet and more of the text (`whole` false) is to come.
 */
function headIn(out: Buffer, whole: boolean, bytes: number, wholeFirstLine: boolean, maxBytes: number): Buffer | null {
  if (!wholeFirstLine) return out.length >= bytes || whole ? out.subarray(0, bytes) : null;
  const nl = out.indexOf(0x0a);
  if (nl !== -1) return out.subarray(0, Math.max(bytes, nl + 1));
  return out.length >= maxBytes || whole ? out.subarray(0, maxBytes) : null;
}

/**
 * The head (see headIn) of a gzip file's text: a prefix of the file decompressed, doubled
 * until that is enough (a damaged or unfinished file gives what its start decompresses to).
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
        throw decompressError(file, (err as Error).message);
      }
      const head = headIn(out, got >= size, bytes, wholeFirstLine, maxBytes);
      if (head) return head;
    }
  } finally {
    closeSync(fd);
  }
}

/** Whether a file is read through a decoder program (zstd, bzip2, xz), a process per read. */
export function decodedByProgram(file: string): boolean {
  const c = compressionOf(file);
  return c !== null && c !== 'gz';
}

/**
 * The head (see headIn) of a compressed file's text: gzip's by gzipHead; the others' from
 * their decoder's output as it comes, the program stopped once that is enough (it runs
 * beside this thread, so discovery starts a few at once).
 */
export async function compressedHead(file: string, bytes: number, wholeFirstLine: boolean, maxBytes: number): Promise<Buffer> {
  if (!decodedByProgram(file)) return gzipHead(file, bytes, wholeFirstLine, maxBytes);
  const chunks: Buffer[] = [];
  let n = 0;
  let newline = false;
  for await (const chunk of readBytes(file, 0, 64 * 1024)) {
    chunks.push(chunk);
    n += chunk.length;
    newline ||= wholeFirstLine && chunk.includes(0x0a);
    if (n >= maxBytes || (n >= bytes && (!wholeFirstLine || newline))) break;
  }
  return headIn(Buffer.concat(chunks, n), true, bytes, wholeFirstLine, maxBytes)!;
}

/**
 * A file's bytes from `start`, in chunks: a plain file's from that offset, a compressed
 * file's uncompressed bytes from that uncompressed offset (those before it are decompressed
 * and dropped). A compressed file that cannot be decompressed ends the read with
 * decompressError; one whose decoder is missing, with what to install.
 */
export async function* readBytes(file: string, start = 0, highWaterMark = 1 << 20): AsyncGenerator<Buffer> {
  const c = compressionOf(file);
  if (!c) {
    yield* createReadStream(file, { start, highWaterMark }) as AsyncIterable<Buffer>;
    return;
  }
  let skip = start;
  const from = function* (chunk: Buffer): Generator<Buffer> {
    if (skip >= chunk.length) {
      skip -= chunk.length;
      return;
    }
    yield skip ? chunk.subarray(skip) : chunk;
    skip = 0;
  };
  if (c === 'gz') {
    const raw = createReadStream(file, { highWaterMark });
    // Until the gunzip has begun, a missing or unreadable file is that, not a bad gzip.
    let opened = false;
    raw.once('open', () => (opened = true));
    const out = pipeline(raw, createGunzip({ chunkSize: highWaterMark }), () => undefined);
    try {
      for await (const chunk of out as AsyncIterable<Buffer>) yield* from(chunk);
    } catch (err) {
      throw opened ? decompressError(file, (err as Error).message) : err;
    } finally {
      raw.destroy();
    }
    return;
  }
  const child = spawn(PROGRAMS[c].program, ['-dc', '--', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4096)));
  const exited = new Promise<{ error?: Error; status: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (error) => resolve({ error, status: null, signal: null }));
    child.once('close', (status, signal) => resolve({ status, signal }));
  });
  // The program's output is drained as it comes, up to READ_AHEAD bytes ahead of the reader
  // (a pipe holds 64 KiB: the program would otherwise wait for each of the reader's turns),
  // and handed over in chunks of about `highWaterMark`, as a file's are read.
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let wake: (() => void) | undefined;
  const out = child.stdout;
  out.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= READ_AHEAD) out.pause();
    wake?.();
  });
  out.once('close', () => {
    ended = true;
    wake?.();
  });
  let done = false;
  try {
    for (;;) {
      if (!queue.length) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      let n = 0;
      let k = 0;
      while (k < queue.length && n < highWaterMark) n += queue[k++]!.length;
      const chunks = queue.splice(0, k);
      queued -= n;
      if (out.isPaused() && queued < READ_AHEAD / 2) out.resume();
      yield* from(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, n));
    }
    done = true;
  } finally {
    if (!done) child.kill();
  }
  const failed = decoderFailure(file, { ...(await exited), stderr });
  if (failed) throw failed;
}

import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { genericJsonlImporter } from './genericJsonl';
import { miniSweAgentImporter } from './miniSweAgent';
import { primeRlImporter } from './primeRl';
import { rllmImporter } from './rllm';
import { skyrlImporter } from './skyrl';
import { sweAgentImporter } from './sweAgent';
import { trlImporter } from './trl';
import type { FormatName, Importer } from './types';
import { shQuote } from '../../jobs/quote';
import { compressedHead, decodedByProgram, gzipHead, isCompressed, uncompressedName } from '../compressed';
import { ImportError } from '../rows';
import { compareNames, posix } from './util';
import { verifiersImporter } from './verifiers';
import { verlImporter } from './verl';

export type { FieldMapping, FormatName, Importer } from './types';
export { FORMATS } from './types';

/** Every importer, most specific layout first (auto-detection takes the first match). */
export const IMPORTERS: Importer[] = [miniSweAgentImporter, sweAgentImporter, rllmImporter, trlImporter, skyrlImporter, primeRlImporter, verifiersImporter, verlImporter, genericJsonlImporter];

export function importerFor(format: FormatName): Importer {
  const imp = IMPORTERS.find((i) => i.format === format);
  if (!imp) throw new Error(`no importer for format "${format}"; known: ${IMPORTERS.map((i) => i.format).join(', ')}`);
  return imp;
}

/** Data files: plain, or compressed JSON (read through its decoder, see compressed.ts). */
const DATA_FILE = /\.(jsonl|json|parquet|traj)$|\.(jsonl|json|traj)\.(gz|zst|bz2|xz)$/;
/** A Parquet file compressed (it compresses its own columns): listed, with the command that decompresses one. */
const COMPRESSED_DATA_FILE = /\.parquet\.(gz|zst|bz2|xz)$/;
const DECOMPRESS: Record<string, string> = { gz: 'gunzip -k', zst: 'zstd -d', bz2: 'bunzip2 -k', xz: 'unxz -k' };

function compressedReason(file: string): string {
  const ext = file.slice(file.lastIndexOf('.') + 1);
  return `compressed (.${ext}): Parquet is read uncompressed (it compresses its own columns); decompress it first (${DECOMPRESS[ext]} ${shQuote(file)})`;
}
/** Archives, which may hold a dump: listed with the command that extracts one beside it. */
const ARCHIVE = /\.(zip|tar|tgz|tar\.(gz|zst|bz2|xz))$/;

function archiveReason(file: string): string {
  const into = shQuote(file.replace(ARCHIVE, ''));
  // (Python's zipfile: python3 is there wherever reward code runs; unzip often is not)
  const extract = file.endsWith('.zip') ? `python3 -m zipfile -e ${shQuote(file)} ${into}` : `mkdir -p ${into} && tar -xf ${shQuote(file)} -C ${into}`;
  return `an archive: import reads the files in it once extracted (${extract}), then import that folder`;
}

/** Why a data file compressed otherwise than gzip, or an archive, is not read; null for any other file. */
function unreadReason(file: string): string | null {
  return COMPRESSED_DATA_FILE.test(file) ? compressedReason(file) : ARCHIVE.test(file) ? archiveReason(file) : null;
}
const SKIP_DIRS = new Set(['.git', 'node_modules', '.evotrainer', '__pycache__']);

/** The files a format is read from, when `--format` forces it on a folder whatever the layout. */
const FORMAT_FILES: Record<FormatName, { re: RegExp; kind: string }> = {
  verl: { re: /\.jsonl$/, kind: '*.jsonl' },
  trl: { re: /\.parquet$/, kind: '*.parquet' },
  skyrl: { re: /\.jsonl$/, kind: '*.jsonl' },
  rllm: { re: /(?<!\.traj)\.json$/, kind: '*.json' },
  'prime-rl': { re: /\.jsonl$/, kind: '*.jsonl' },
  verifiers: { re: /\.jsonl$/, kind: '*.jsonl' },
  'mini-swe-agent': { re: /\.traj\.json$/, kind: '*.traj.json' },
  'swe-agent': { re: /\.traj$/, kind: '*.traj' },
  jsonl: { re: /\.jsonl$/, kind: '*.jsonl' },
};

/** A file of a dump folder that is not imported, and why. */
export interface IgnoredFile {
  file: string;
  reason: string;
}

/** Why a file found in a folder is not imported: what it is when we know, else what to do. */
function whyIgnored(file: string, head: string, forced: Importer | undefined): string {
  const name = path.basename(file);
  if (name === 'metadata.json' && /"(env|env_id)"\s*:/.test(head)) return 'vf-eval metadata: read with the results.jsonl beside it';
  if (/"(resolved_ids|unresolved_ids|error_ids)"\s*:/.test(head)) return 'a SWE-bench run summary: read for the verdicts of the trajectories beside it';
  if (/\.report\.json$|(^|\/)report\.json$/.test(posix(file))) return 'a SWE-bench report: read for the verdict of its trajectory';
  if (forced) return `--format ${forced.format} reads ${FORMAT_FILES[forced.format].kind} files`;
  if (/\.jsonl$/.test(name) && !head.includes('\n') && Buffer.byteLength(head) >= FIRST_LINE_MAX - 4) return `its first line is over ${FIRST_LINE_MAX >> 20} MB, more than its layout is recognized by: import it with --format FORMAT`;
  if (/\.jsonl$/.test(name)) return 'JSONL in no known layout: import it with --format jsonl --map prompt=FIELD,… (or --format FORMAT)';
  return `not in a known dump format (${IMPORTERS.filter((i) => i.format !== 'jsonl').map((i) => i.format).join(', ')}); pass --format to read it as one`;
}

export interface DiscoveredFile {
  file: string;
  importer: Importer;
  /** The path the user gave that led here (names the run by default). */
  root: string;
}

/** What a path is when it is neither a regular file nor a directory. */
function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Refuses what is not a regular file: a FIFO blocks open() until a writer comes, a device
 * like /dev/zero never ends. The error says where and what to do.
 */
export function notRegular(file: string, st: Stats): Error {
  return new Error(`${file}: ${kindOf(st)}, not a regular file; import reads regular files only (copy the data into a file first)`);
}

// Synchronous: thousands of small reads cost more in thread-pool round trips than they block.
// O_NONBLOCK: a path swapped for a FIFO after it was checked cannot block the open; fstat then refuses it.
export function readHead(file: string, bytes = 64 * 1024): string {
  return (isCompressed(file) ? compressedHeadOf(file, bytes, false) : readHeadBytes(file, bytes, false)).toString('utf8');
}

/**
 * The head of a JSON-lines file: its first `bytes`, or more where its first line is longer
 * (a verl line holds the whole response before its score; a 30k-token answer is some
 * 100 KB), up to the end of that line or FIRST_LINE_MAX bytes: what a dump's layout is
 * recognized by, and its bulk plan made from.
 */
export function readJsonlHead(file: string, bytes = 64 * 1024): string {
  return (isCompressed(file) ? compressedHeadOf(file, bytes, true) : readHeadBytes(file, bytes, true)).toString('utf8');
}

/** What a file's layout is recognized by: JSONL lines can be long (verl's score comes after the full response); documents say what they are early. */
function headOf(file: string, async: false): string;
function headOf(file: string, async: true): Promise<string>;
function headOf(file: string, async: boolean): string | Promise<string> {
  const ext = path.extname(uncompressedName(file));
  if (ext === '.parquet') return async ? Promise.resolve('') : '';
  const [bytes, whole] = ext === '.jsonl' ? [64 * 1024, true] : [8 * 1024, false];
  if (!async) return whole ? readJsonlHead(file, bytes) : readHead(file, bytes);
  const st = statSync(file);
  if (!st.isFile()) return Promise.reject(notRegular(file, st));
  return compressedHead(file, bytes, whole, whole ? FIRST_LINE_MAX : bytes).then((b) => b.toString('utf8'));
}

/**
 * A gzip file's uncompressed head (see gzipHead), after the checks readHeadBytes makes of a
 * plain file. A file a decoder program reads has its head read asynchronously (see discover).
 */
function compressedHeadOf(file: string, bytes: number, wholeFirstLine: boolean): Buffer {
  if (decodedByProgram(file)) throw new Error(`${file}: the head of a file a decoder program reads is read by compressedHead (asynchronously)`);
  const st = statSync(file);
  if (!st.isFile()) throw notRegular(file, st);
  return gzipHead(file, bytes, wholeFirstLine, wholeFirstLine ? FIRST_LINE_MAX : bytes);
}

/** The most of a first line that readJsonlHead reads. */
export const FIRST_LINE_MAX = 16 * 1024 * 1024;

function readHeadBytes(file: string, bytes: number, wholeFirstLine: boolean): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(file, st);
    let buf = Buffer.alloc(bytes);
    let n = readSync(fd, buf, 0, bytes, 0);
    // A first line longer than the head: read on, doubling, to its end.
    while (wholeFirstLine && n === buf.length && buf.indexOf(0x0a) === -1 && buf.length < FIRST_LINE_MAX) {
      const more = Buffer.alloc(Math.min(buf.length * 2, FIRST_LINE_MAX));
      buf.copy(more, 0, 0, n);
      buf = more;
      for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, n);
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * Data files under `dir`. A symlink to a regular file counts as that file (dumps are often
 * linked into place); a symlink to a directory is not followed (it may loop), and a FIFO,
 * device or socket is never opened: those, and broken links, are listed with why.
 */
async function walk(dir: string, out: string[], skipped: IgnoredFile[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => compareNames(a.name, b.name));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) await walk(p, out, skipped);
      continue;
    }
    if (!DATA_FILE.test(e.name)) {
      const reason = unreadReason(p);
      if (reason) skipped.push({ file: p, reason });
      continue;
    }
    if (e.isFile()) out.push(p);
    else if (e.isSymbolicLink()) {
      const target = await stat(p).catch(() => null);
      if (target?.isFile()) out.push(p);
      else skipped.push({ file: p, reason: target === null ? 'a broken symlink' : target.isDirectory() ? 'a symlink to a directory, not followed' : `a symlink to ${kindOf(target)}` });
    } else skipped.push({ file: p, reason: `${kindOf(await stat(p))}, not read` });
  }
}

/**
 * Finds the files under the given paths and the importer of each: `format` when given,
 * otherwise by the trainer's dump layout and the first bytes. A file named explicitly
 * that no importer recognizes is an error; unrecognized files inside a directory are
 * listed as ignored, each with the reason (reports, configs, …), and so are data-file names
 * that are not regular files (see walk). `format` on a directory takes every file of that
 * format's kind, whatever the layout. A path given that is not a regular file or directory
 * is refused before anything opens it.
 */
export async function discover(paths: string[], format?: FormatName): Promise<{ files: DiscoveredFile[]; ignored: IgnoredFile[] }> {
  const files: DiscoveredFile[] = [];
  const ignored: IgnoredFile[] = [];
  const forced = format ? importerFor(format) : undefined;
  for (const root of paths) {
    let st;
    try {
      st = await stat(root);
    } catch {
      throw new Error(`${root}: no such file or directory`);
    }
    const candidates: string[] = [];
    if (st.isDirectory()) await walk(root, candidates, ignored);
    else if (st.isFile() && unreadReason(root)) throw new Error(`${root}: ${unreadReason(root)}`);
    else if (st.isFile()) candidates.push(root);
    else throw notRegular(root, st);
    // The heads of files a decoder program reads (zstd, bzip2, xz): a process each, the next
    // few started while this one is looked at.
    const spawned = new Map<string, Promise<string>>();
    const ahead = Math.max(2, availableParallelism()) + 1;
    for (let i = 0; i < candidates.length; i++) {
      for (const next of candidates.slice(i, i + ahead)) {
        if (!decodedByProgram(next) || spawned.has(next)) continue;
        const head = headOf(next, true);
        head.catch(() => undefined); // awaited in turn
        spawned.set(next, head);
      }
      const file = candidates[i]!;
      let text: string;
      try {
        const head = spawned.get(file);
        spawned.delete(file);
        text = head ? await head : headOf(file, false);
      } catch (err) {
        // A compressed file damaged at its start (or not what its name says): said of that file, the rest imported.
        if (!(err instanceof ImportError) || !st.isDirectory()) throw err;
        ignored.push({ file, reason: err.reason });
        continue;
      }
      // --format on a folder: every file of the format's kind, whatever the layout, except
      // the verdict and metadata files that go with the rollouts.
      // A layout is recognized by the uncompressed name (`12.jsonl.gz` is verl's `12.jsonl`).
      const name = uncompressedName(file);
      const forcedHere = forced && (!st.isDirectory() || forced.matches(name, text) || (FORMAT_FILES[forced.format].re.test(posix(name)) && !/"(resolved_ids|unresolved_ids|error_ids)"\s*:/.test(text) && path.basename(name) !== 'metadata.json'));
      const importer = forced ? (forcedHere ? forced : undefined) : IMPORTERS.find((i) => i.matches(name, text));
      if (importer) files.push({ file, importer, root });
      else if (!st.isDirectory()) {
        throw new Error(`${file}: not a recognized rollout dump (${IMPORTERS.filter((i) => i.format !== 'jsonl').map((i) => i.format).join(', ')}); pass --format, or --format jsonl with --map for other JSONL`);
      } else ignored.push({ file, reason: whyIgnored(name, text, forced) });
    }
  }
  return { files, ignored };
}

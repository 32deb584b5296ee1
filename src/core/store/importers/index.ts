import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { genericJsonlImporter } from './genericJsonl';
import { miniSweAgentImporter } from './miniSweAgent';
import { primeRlImporter } from './primeRl';
import { rllmImporter } from './rllm';
import { skyrlImporter } from './skyrl';
import { sweAgentImporter } from './sweAgent';
import { trlImporter } from './trl';
import type { FormatName, Importer } from './types';
import { verlImporter } from './verl';

export type { FieldMapping, FormatName, Importer } from './types';
export { FORMATS } from './types';

/** Every importer, most specific layout first (auto-detection takes the first match). */
export const IMPORTERS: Importer[] = [miniSweAgentImporter, sweAgentImporter, rllmImporter, trlImporter, skyrlImporter, primeRlImporter, verlImporter, genericJsonlImporter];

export function importerFor(format: FormatName): Importer {
  const imp = IMPORTERS.find((i) => i.format === format);
  if (!imp) throw new Error(`no importer for format "${format}"; known: ${IMPORTERS.map((i) => i.format).join(', ')}`);
  return imp;
}

const DATA_FILE = /\.(jsonl|json|parquet|traj)$/;
const SKIP_DIRS = new Set(['.git', 'node_modules', '.evotrainer', '__pycache__']);

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
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(file, st);
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Data files under `dir`. A symlink to a regular file counts as that file (dumps are often
 * linked into place); a symlink to a directory is not followed (it may loop), and a FIFO,
 * device or socket is never opened: those, and broken links, are listed in `skipped` with why.
 */
async function walk(dir: string, out: string[], skipped: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) await walk(p, out, skipped);
      continue;
    }
    if (!DATA_FILE.test(e.name)) continue;
    if (e.isFile()) out.push(p);
    else if (e.isSymbolicLink()) {
      const target = await stat(p).catch(() => null);
      if (target?.isFile()) out.push(p);
      else skipped.push(`${p} (${target === null ? 'a broken symlink' : target.isDirectory() ? 'a symlink to a directory, not followed' : `a symlink to ${kindOf(target)}`})`);
    } else skipped.push(`${p} (${kindOf(await stat(p))}, not read)`);
  }
}

/**
 * Finds the files under the given paths and the importer of each: `format` when given,
 * otherwise by the trainer's dump layout and the first bytes. A file named explicitly
 * that no importer recognizes is an error; unrecognized files inside a directory are
 * listed as ignored (reports, configs, …); data-file names inside a directory that are not
 * regular files (see walk) are listed as skipped, each with why. A path given that is not a
 * regular file or directory is refused before anything opens it.
 */
export async function discover(paths: string[], format?: FormatName): Promise<{ files: DiscoveredFile[]; ignored: string[]; skipped: string[] }> {
  const files: DiscoveredFile[] = [];
  const ignored: string[] = [];
  const skipped: string[] = [];
  const forced = format ? importerFor(format) : undefined;
  for (const root of paths) {
    let st;
    try {
      st = await stat(root);
    } catch {
      throw new Error(`${root}: no such file or directory`);
    }
    const candidates: string[] = [];
    if (st.isDirectory()) await walk(root, candidates, skipped);
    else if (st.isFile()) candidates.push(root);
    else throw notRegular(root, st);
    for (const file of candidates) {
      // JSONL lines can be long (verl's score comes after the full response); documents say what they are early.
      const ext = path.extname(file);
      const text = ext === '.parquet' ? '' : readHead(file, ext === '.jsonl' ? 64 * 1024 : 8 * 1024);
      const importer = forced && (forced.matches(file, text) || forced.format === 'jsonl' || !st.isDirectory()) ? forced : forced ? undefined : IMPORTERS.find((i) => i.matches(file, text));
      if (importer) files.push({ file, importer, root });
      else if (!st.isDirectory()) {
        throw new Error(`${file}: not a recognized rollout dump (${IMPORTERS.filter((i) => i.format !== 'jsonl').map((i) => i.format).join(', ')}); pass --format, or --format jsonl with --map for other JSONL`);
      } else ignored.push(file);
    }
  }
  return { files, ignored, skipped };
}

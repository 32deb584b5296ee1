import { ImportError } from '../rows';

/**
 * Whole-document files (SWE-agent `.traj`, mini-swe-agent `.traj.json`, rLLM episodes,
 * SWE-bench run summaries, vf-eval metadata) are parsed in memory at once, so a file of
 * gigabytes would be read whole before anything could refuse it. A limit refuses such a
 * file from its size alone, before a byte is read. The default, 256 MiB, is over a hundred
 * times the largest real trajectory in the test data (psf__requests-1142, 2.0 MB) and the
 * same bound as a JSONL line's; `--max-document-size` or EVOTRAINER_MAX_DOCUMENT_SIZE
 * raise or lower it.
 */
export const DEFAULT_MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;
export const MAX_DOCUMENT_ENV = 'EVOTRAINER_MAX_DOCUMENT_SIZE';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4 };

/** A size as people write it: `300000000`, `512M`, `2G`, `1.5GiB` (binary units). Throws naming `where` when it is not one. */
export function parseSize(text: string, where: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || !(Number(m[1]) > 0)) throw new Error(`${where}: "${text}" is not a size; write bytes or a number with K, M, G or T (binary units), e.g. 512M or 2G`);
  return Math.floor(Number(m[1]) * unit);
}

/** The limit in force: the one given, else EVOTRAINER_MAX_DOCUMENT_SIZE, else the default. */
export function maxDocumentBytes(given?: number): number {
  if (given !== undefined) return given;
  const env = process.env[MAX_DOCUMENT_ENV];
  return env ? parseSize(env, MAX_DOCUMENT_ENV) : DEFAULT_MAX_DOCUMENT_BYTES;
}

/** `3.00 GiB`, `256 MiB`, `12.5 KiB`. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${Number.isInteger(v) ? v : v.toFixed(2)} ${units[i]}`;
}

/** A limit that would admit `size`: the next whole GiB, or MiB under one GiB. */
function roomFor(size: number): string {
  return size >= 1024 ** 3 ? `${Math.ceil(size / 1024 ** 3)}G` : `${Math.ceil(size / 1024 ** 2) + 1}M`;
}

/**
 * Why a whole-document file of `size` bytes is refused under `limit`, or null when it fits.
 * `uncompressed`: the size is a compressed file's uncompressed one (`atLeast`: it decompressed
 * past the limit, its whole size unknown).
 */
export function documentTooLarge(file: string, size: number, limit: number, how: { uncompressed?: boolean; atLeast?: boolean } = {}): ImportError | null {
  if (size <= limit) return null;
  const what = how.atLeast ? `over ${formatBytes(limit)} uncompressed` : `${formatBytes(size)} (${size} bytes)${how.uncompressed ? ' uncompressed' : ''}`;
  return new ImportError(
    file,
    null,
    `${what}, over the ${formatBytes(limit)} ${TOO_LARGE} (a trajectory or JSON document is parsed in memory at once); ` +
      `to import it, raise the limit: --max-document-size ${roomFor(size)} (or ${MAX_DOCUMENT_ENV}=${roomFor(size)}); to import the rest without it, --on-error skip or quarantine`,
  );
}

const TOO_LARGE = 'limit on a file read whole';

/** Whether an error is documentTooLarge's (also after it crossed from a worker thread). */
export function isTooLarge(err: unknown): err is ImportError {
  return err instanceof ImportError && err.line === null && err.reason.includes(`, over the `) && err.reason.includes(TOO_LARGE);
}

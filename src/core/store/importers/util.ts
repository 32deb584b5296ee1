import { uncompressedName } from '../compressed';
import { ImportError, type ImporterItem, type SourcePosition } from '../rows';

/** Compares file names in natural order (2 before 10), with one collator for every comparison. */
export const compareNames = new Intl.Collator('en', { numeric: true }).compare;

/**
 * The path a file's layout is read from: forward slashes, and a compressed data file under
 * its uncompressed name (`12.jsonl.gz` is verl's step 12, see compressed.ts).
 */
export function posix(file: string): string {
  return uncompressedName(file).replace(/\\/g, '/');
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A bad record the caller can skip or quarantine. */
export function bad(file: string, line: number | null, reason: string, raw?: string, at?: Partial<SourcePosition>): ImporterItem {
  return { error: new ImportError(file, line, reason, raw), at: { file, line: line ?? undefined, ...at } };
}

/** How an error message names what it found instead. */
export function describeType(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Raw text kept for the quarantine table: at most 64 KiB of it. */
export function clip(s: string): string {
  return s.length > 65536 ? s.slice(0, 65536) : s;
}

/** A finite number, or null for null / NaN / missing; `undefined` when it is not numeric at all. */
export function num(v: unknown): number | null | undefined {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

export function bool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v > 0 : null;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['true', 'yes', '1', 'correct'].includes(s)) return true;
    if (['false', 'no', '0', 'incorrect'].includes(s)) return false;
  }
  return null;
}

export function str(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** `global_step_12`, `step_12`, `12.jsonl` … → 12 */
export function stepFromPath(file: string, re: RegExp): number | null {
  const m = re.exec(posix(file));
  return m ? Number(m[1]) : null;
}

/** Reads a dotted path (`a.b.0.c`) from a record. */
export function getPath(obj: unknown, dotted: string): unknown {
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (Array.isArray(cur) && /^\d+$/.test(part)) cur = cur[Number(part)];
    else if (isRecord(cur)) cur = cur[part];
    else return undefined;
  }
  return cur;
}

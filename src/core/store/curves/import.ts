import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { CurveFile } from './index';
import { hashPrefix } from '../hashing';
import type { CurveFormat } from './types';

export interface CurveImportOptions {
  /** Run the curves belong to (default: the run the file names, else the name of the path given). */
  run?: string;
  version?: string | null;
  signal?: AbortSignal;
  /** The run name a path implies when neither the user nor the file names one. */
  defaultRun: (root: string) => string;
}

export interface CurveFileResult {
  file: string;
  format: CurveFormat;
  run: string;
  status: 'imported' | 'unchanged';
  /** Continued an earlier import of the same file (a log still being written). */
  resumed: boolean;
  points: number;
  badRecords: number;
}

/** A record that was skipped: where, and why. */
export interface CurveProblem {
  file: string;
  line?: number;
  offset?: number;
  reason: string;
}

export interface CurveImportSummary {
  files: CurveFileResult[];
  points: number;
  badRecords: number;
  /** The first problems (at most MAX_PROBLEMS), each with its file and line or byte offset. */
  problems: CurveProblem[];
}

const MAX_PROBLEMS = 100;
const FLUSH_ROWS = 50_000;

interface Previous {
  end_offset: number | null;
  end_line: number | null;
  content_hash: string;
  file_size: number;
  file_mtime_ms: number;
}

/** `file:line` or `file@offset`, as an error names a place in a text or a binary file. */
export function where(p: CurveProblem): string {
  return p.line !== undefined ? `${p.file}:${p.line}` : p.offset !== undefined ? `${p.file}@${p.offset}` : p.file;
}

/**
 * Imports the training curves of `found` (see discoverCurves) into `metric_rows`, inside the caller's
 * transaction: rows become visible through the `metrics` view once `metric_imports`
 * records their import, in the same transaction. A file imported before and unchanged is
 * skipped; one that grew (a live log) is read on from where the last import stopped, when
 * what was read then is unchanged; the same bytes under another name are not imported
 * twice into one run. A malformed record is skipped and reported with its line (or byte
 * offset), never fatal: a live log is full of half-written and foreign lines.
 */
export async function importCurves(conn: DuckDBConnection, found: CurveFile[], opts: CurveImportOptions): Promise<CurveImportSummary> {
  const summary: CurveImportSummary = { files: [], points: 0, badRecords: 0, problems: [] };
  if (!found.length) return summary;
  const rows = async <T>(sql: string, params: (string | number)[] = []) => (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as T[];
  const top = Number((await rows<{ n: bigint | number }>(`select coalesce(max(id), 0) as n from metric_imports`))[0]!.n);
  // Rows of an import that died before it was recorded.
  await conn.run(`delete from metric_rows where import_id > ?`, [top]);
  let nextId = top + 1;
  const previous = new Map(
    (await rows<Previous & { path: string; run_id: string }>(
      `select path, run_id, end_offset, end_line, content_hash, file_size, file_mtime_ms from metric_imports qualify row_number() over (partition by path, run_id order by id desc) = 1`,
    )).map((r) => [`${r.run_id}\0${r.path}`, { ...r, end_offset: num(r.end_offset), end_line: num(r.end_line), file_size: Number(r.file_size) }]),
  );
  const hashes = new Set((await rows<{ h: string }>(`select run_id || ':' || content_hash as h from metric_imports`)).map((r) => r.h));
  const seen = new Set<string>();
  let appender = await conn.createAppender('metric_rows');
  let pending = 0;
  const records: { id: number; path: string; format: string; run: string; hash: string; endOffset: number; endLine: number; size: number; mtimeMs: number; points: number; bad: number }[] = [];
  const runs = new Map<string, { format: string; root: string }>();
  try {
    for (const f of found) {
      if (seen.has(f.file)) continue;
      seen.add(f.file);
      const run = opts.run ?? f.reader.runName?.(f.file) ?? opts.defaultRun(f.root);
      const result = await importOne(f, run);
      summary.files.push(result);
      summary.points += result.points;
      summary.badRecords += result.badRecords;
    }
    appender.closeSync();
  } catch (err) {
    try {
      appender.closeSync();
    } catch {
      // the rows go with the failed import
    }
    await conn.run(`delete from metric_rows where import_id > ?`, [top]);
    throw err;
  }
  if (records.length) {
    const a = await conn.createAppender('metric_imports');
    for (const r of records) {
      a.appendInteger(r.id);
      a.appendVarchar(r.path);
      a.appendVarchar(r.format);
      a.appendVarchar(r.run);
      if (opts.version === null || opts.version === undefined) a.appendNull();
      else a.appendVarchar(opts.version);
      a.appendVarchar(r.hash);
      a.appendBigInt(BigInt(r.endOffset));
      a.appendBigInt(BigInt(r.endLine));
      a.appendBigInt(BigInt(r.size));
      a.appendDouble(r.mtimeMs);
      a.appendBigInt(BigInt(r.points));
      a.appendBigInt(BigInt(r.bad));
      a.appendDefault();
      a.endRow();
    }
    a.closeSync();
    for (const [run, r] of runs) await conn.run(`insert into runs (id, version, framework, source, created_at) values (?, ?, ?, ?, now()) on conflict do nothing`, [run, opts.version ?? null, r.format, path.resolve(r.root)]);
  }
  return summary;

  async function importOne(f: CurveFile, run: string): Promise<CurveFileResult> {
    const base: CurveFileResult = { file: f.file, format: f.reader.format, run, status: 'unchanged', resumed: false, points: 0, badRecords: 0 };
    const { size, mtimeMs } = statSync(f.file);
    const prev = previous.get(`${run}\0${f.file}`);
    if (prev && prev.file_size === size && prev.file_mtime_ms === mtimeMs) return base;
    let startOffset = 0;
    let startLine = 1;
    let hash = createHash('sha256');
    if (prev?.end_offset && size >= prev.end_offset) {
      const prefix = await hashPrefix(f.file, prev.end_offset);
      if (prefix.copy().digest('hex') === prev.content_hash) {
        startOffset = prev.end_offset;
        startLine = (prev.end_line ?? 0) + 1;
        hash = prefix;
      }
    }
    let hashed = startOffset;
    const id = nextId;
    let endOffset = startOffset;
    let endLine = startLine - 1;
    let points = 0;
    let bad = 0;
    const source = f.reader.format;
    for await (const item of f.reader.read(f.file, {
      startOffset,
      startLine,
      onChunk: (b) => {
        hash.update(b);
        hashed += b.length;
      },
    })) {
      if (opts.signal?.aborted) throw new Error(`${f.file}: the import was interrupted; nothing was recorded`);
      endOffset = item.at.endOffset;
      if (item.at.line !== undefined) endLine = item.at.line;
      if ('bad' in item) {
        bad++;
        if (summary.problems.length < MAX_PROBLEMS) summary.problems.push({ file: f.file, line: item.at.line, offset: item.at.offset, reason: item.bad });
        continue;
      }
      const ordinal = item.at.line ?? item.at.offset ?? 0;
      for (const p of item.points) {
        append(appender, id, run, opts.version ?? null, source, p.step, p.metric, p.value, p.wallTime, ordinal);
        points++;
        if (++pending >= FLUSH_ROWS) {
          appender.closeSync();
          appender = await conn.createAppender('metric_rows');
          pending = 0;
        }
      }
    }
    if (points === 0 && bad === 0) return { ...base, resumed: startOffset > 0 };
    const consumed = endOffset === hashed ? hash.digest('hex') : (await hashPrefix(f.file, endOffset)).digest('hex');
    if (hashes.has(`${run}:${consumed}`)) {
      // The same bytes already imported under another name.
      appender.closeSync();
      await conn.run(`delete from metric_rows where import_id = ?`, [id]);
      appender = await conn.createAppender('metric_rows');
      pending = 0;
      return base;
    }
    nextId++;
    hashes.add(`${run}:${consumed}`);
    records.push({ id, path: f.file, format: source, run, hash: consumed, endOffset, endLine, size, mtimeMs, points, bad });
    if (!runs.has(run)) runs.set(run, { format: source, root: f.root });
    return { ...base, status: 'imported', resumed: startOffset > 0, points, badRecords: bad };
  }
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

function append(a: DuckDBAppender, importId: number, run: string, version: string | null, source: string, step: number, metric: string, value: number, wallTime: number | null, ordinal: number): void {
  a.appendInteger(importId);
  a.appendVarchar(run);
  if (version === null) a.appendNull();
  else a.appendVarchar(version);
  a.appendVarchar(source);
  a.appendBigInt(BigInt(Math.trunc(step)));
  a.appendVarchar(metric);
  a.appendDouble(value);
  if (wallTime === null || !Number.isFinite(wallTime)) a.appendNull();
  else a.appendDouble(wallTime);
  a.appendBigInt(BigInt(ordinal));
  a.endRow();
}

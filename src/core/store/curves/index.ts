import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { readHead } from '../importers';
import { compareNames, posix } from '../importers/util';
import { mlflowReader } from './mlflow';
import { tensorboardReader } from './tensorboard';
import type { CurveReader } from './types';
import { verlConsoleReader } from './verlConsole';
import { verlFileReader } from './verlFile';

export type { CurveFormat, CurvePoint, CurveReader } from './types';


const SKIP_DIRS = new Set(['.git', 'node_modules', '.evotrainer', '__pycache__']);
/** Files worth sniffing for curves inside a directory: logs, JSONL, event files, MLflow metric files. */
const CANDIDATE = /(?:\.(?:log|out|err|txt|jsonl)$|^(?:log|stdout|stderr)(?:\.[\w-]+)?$|^events\.out\.tfevents\.)/;

/** A log by its name (not JSONL): where training curves may appear once the run gets to its first step. */
export function isLogName(file: string): boolean {
  const base = path.basename(file);
  return CANDIDATE.test(base) && !base.endsWith('.jsonl') && !base.startsWith('events.out.tfevents.');
}

/** The reader of `file`, or null when it holds no curves this product reads. */
export function curveReaderFor(file: string): CurveReader | null {
  const base = path.basename(file);
  if (base.startsWith('events.out.tfevents.')) return tensorboardReader;
  if (/\/metrics\//.test(posix(file)) && mlflowReader.matches(file, '')) return mlflowReader;
  if (!CANDIDATE.test(base)) return null;
  try {
    if (base.endsWith('.jsonl')) return verlFileReader.matches(file, readHead(file, 512)) ? verlFileReader : null;
    return hasStepLine(file) ? verlConsoleReader : null;
  } catch {
    return null;
  }
}

/** A job log prints megabytes (configs, warnings) before its first step line: look that far. */
const SNIFF_BYTES = 16 * 1024 * 1024;

function hasStepLine(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    let carry = '';
    for (let pos = 0; pos < SNIFF_BYTES; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) return false;
      const text = carry + buf.subarray(0, n).toString('latin1');
      if (verlConsoleReader.matches(file, text)) return true;
      carry = text.slice(-4096);
      pos += n;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

export interface CurveFile {
  file: string;
  reader: CurveReader;
  /** The path the user gave that led here (names the run by default). */
  root: string;
}

function walk(dir: string, out: string[]): void {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareNames(a.name, b.name));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) walk(p, out);
    } else if (e.isFile()) out.push(p);
  }
}

/** The curve files under the given paths (files named, or found in directories). */
export function discoverCurves(paths: string[]): CurveFile[] {
  const found: CurveFile[] = [];
  for (const root of paths) {
    let st;
    try {
      st = statSync(root);
    } catch {
      continue; // the rollout importer reports a missing path
    }
    const files: string[] = [];
    if (st.isDirectory()) walk(root, files);
    else if (st.isFile()) files.push(root); // a FIFO or device is refused by the rollout importer, never opened here
    for (const file of files) {
      const reader = curveReaderFor(file);
      if (reader) found.push({ file: path.resolve(file), reader, root });
    }
  }
  return found;
}

import { parse as parseYaml } from 'yaml';
import { catFileBatch, gitBytes, gitOut } from './git';
import { checkManifest, hashContent, MANIFEST_FILE, type Manifest } from './manifest';
import type { Harness } from './repo';

/** What an intervention changes between two trees: files, and keys of config files. */
export interface FileChange {
  status: 'A' | 'M' | 'D' | 'T';
  path: string;
}

export interface KeyChange {
  file: string;
  key: string;
  before: unknown;
  after: unknown;
}

export interface ChangeSet {
  files: FileChange[];
  /** Per config file (YAML/JSON) that parsed on both sides: its changed leaf keys. */
  keys: KeyChange[];
  /** Config files whose keys could not be compared (unparseable on one side). */
  opaque: string[];
  /** The manifest of the new tree (null when missing or invalid). */
  manifest: Manifest | null;
  /** sha256 of the eval set at `evalPath` in the new tree (null when absent). */
  evalHash: string | null;
}

export const isConfigFile = (p: string) => /\.(ya?ml|json)$/i.test(p);

function parseConfig(file: string, text: string): unknown {
  return /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
}

/** Leaf keys as dotted paths; arrays are one value (a list is one setting). */
export function flattenKeys(value: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length && prefix) out.set(prefix, {});
    for (const [k, v] of entries) flattenKeys(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) out.set(prefix, value);
  return out;
}

export function diffConfigText(file: string, before: string | null, after: string | null): KeyChange[] {
  const a = flattenKeys(before === null ? {} : parseConfig(file, before));
  const b = flattenKeys(after === null ? {} : parseConfig(file, after));
  const keys = new Set([...a.keys(), ...b.keys()]);
  const out: KeyChange[] = [];
  for (const key of [...keys].sort()) {
    const x = a.get(key);
    const y = b.get(key);
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push({ file, key, before: x ?? null, after: y ?? null });
  }
  return out;
}

/**
 * Compares two trees (commits or tree ids) with a handful of git processes: the file
 * list from `diff-tree`, both sides of every config file from one `cat-file --batch`.
 */
export async function analyzeChanges(h: Harness, from: string, to: string, evalPath: string | null): Promise<ChangeSet> {
  const raw = await gitOut(h.root, ['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]);
  const parts = raw.split('\0').filter(Boolean);
  const files: FileChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) files.push({ status: parts[i]![0] as FileChange['status'], path: parts[i + 1]! });
  const configs = files.filter((f) => isConfigFile(f.path)).map((f) => f.path);
  const wanted = [...configs.flatMap((p) => [`${from}:${p}`, `${to}:${p}`]), `${to}:${MANIFEST_FILE}`];
  if (evalPath) wanted.push(`${to}:${evalPath}`);
  const blobs = await catFileBatch(h.root, wanted);
  const keys: KeyChange[] = [];
  const opaque: string[] = [];
  for (const p of configs) {
    try {
      keys.push(...diffConfigText(p, blobs.get(`${from}:${p}`) ?? null, blobs.get(`${to}:${p}`) ?? null));
    } catch {
      opaque.push(p);
    }
  }
  const manifestText = blobs.get(`${to}:${MANIFEST_FILE}`);
  const evalText = evalPath ? blobs.get(`${to}:${evalPath}`) : null;
  return {
    files,
    keys,
    opaque,
    manifest: manifestText ? checkManifest(manifestText).manifest : null,
    // cat-file --batch decoded as UTF-8; hash the bytes for binary-safe pins.
    evalHash: evalText === null || evalText === undefined || !evalPath ? null : await evalHashAt(h, to, evalPath),
  };
}

/** The eval-set pin of a tree: sha256 of the file's bytes, or null when it is absent. */
export async function evalHashAt(h: Harness, rev: string, evalPath: string): Promise<string | null> {
  const bytes = await gitBytes(h.root, ['cat-file', 'blob', `${rev}:${evalPath}`]);
  return bytes ? hashContent(bytes) : null;
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFEST_FILE } from '../core/harness/manifest';

/**
 * The harness files the server understands, told apart by their place in the harness
 * (not by language id, so YAML, SQL, Python and Markdown keep their own editor support):
 *
 *   evotrainer.yaml                      manifest
 *   diagnostics/rules/*.yaml|yml         rule file
 *   diagnostics/metrics/*.sql|py         metric file
 *   skills/*.md                          skill (YAML front matter)
 *   reward/**.py, filters/**.py          reward and filter code (CodeLens)
 */
export type FileKind = 'manifest' | 'rule' | 'metric' | 'skill' | 'python';

export interface HarnessFile {
  kind: FileKind;
  /** The file on disk; null for a document that is not a file (untitled). */
  file: string | null;
  /** The harness root (where evotrainer.yaml is, or would be); null when unknown. */
  root: string | null;
}

/** Languages the client registers for, as a selector would (see src/extension/client.ts). */
export const MANIFEST_LANGUAGE = 'evotrainer-manifest';

function fsPathOf(uri: string): string | null {
  if (!uri.startsWith('file:')) return null;
  try {
    return fileURLToPath(uri);
  } catch {
    return null;
  }
}

/** The nearest folder at or above `dir` holding evotrainer.yaml (a few levels at most). */
function manifestRootAbove(dir: string): string | null {
  let d = dir;
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(d, MANIFEST_FILE))) return d;
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  return null;
}

export function classify(uri: string, languageId?: string): HarnessFile | null {
  const file = fsPathOf(uri);
  const p = (file ?? uri).replace(/\\/g, '/');
  const up = (n: number) => (file ? path.resolve(file, ...Array<string>(n).fill('..')) : null);
  if (languageId === MANIFEST_LANGUAGE || path.posix.basename(p) === MANIFEST_FILE) return { kind: 'manifest', file, root: file ? path.dirname(file) : null };
  if (/\/diagnostics\/rules\/[^/]+\.ya?ml$/i.test(p)) return { kind: 'rule', file, root: up(3) };
  if (/\/diagnostics\/metrics\/[^/]+\.(sql|py)$/i.test(p)) return { kind: 'metric', file, root: up(3) };
  // As the engine lists skills: every .md of skills/ but its README.
  if (/\/skills\/[^/]+\.md$/i.test(p) && !/\/readme\.md$/i.test(p)) return { kind: 'skill', file, root: up(2) };
  const code = /^(.*)\/(reward|filters)\/(?:[^/]+\/)*[^/]+\.py$/i.exec(p);
  if (code) {
    const root = file ? manifestRootAbove(path.dirname(file)) : null;
    // In a harness, only its own top-level reward/ and filters/ hold the trainer's entry points.
    if (root && !/^(reward|filters)\//i.test(path.relative(root, file!).replace(/\\/g, '/'))) return null;
    return { kind: 'python', file, root: root ?? (file ? code[1]! : null) };
  }
  return null;
}

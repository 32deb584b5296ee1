import { isMap, LineCounter, parseDocument } from 'yaml';

export interface ManifestProblem {
  severity: 'error' | 'warning';
  /** 1-based, as editors and `file:line:col` show them. */
  line: number;
  column: number;
  length: number;
  message: string;
}

const REQUIRED_KEYS = ['name', 'domain'] as const;

/**
 * Checks `evotrainer.yaml` text for YAML errors and the keys every harness needs,
 * each problem with its line and column. The full schema arrives with the harness model.
 */
export function checkManifestText(text: string): ManifestProblem[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number) => lineCounter.linePos(offset);
  const problems: ManifestProblem[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const { line, col } = at(e.pos[0]);
    problems.push({ severity: doc.errors.includes(e) ? 'error' : 'warning', line, column: col, length: Math.max(1, e.pos[1] - e.pos[0]), message: e.message.split('\n')[0]! });
  }
  if (doc.errors.length) return problems;
  if (!isMap(doc.contents)) {
    problems.push({ severity: 'error', line: 1, column: 1, length: 1, message: 'evotrainer.yaml must be a mapping of keys (name, domain, primary_metric, …).' });
    return problems;
  }
  for (const key of REQUIRED_KEYS) {
    if (!doc.contents.has(key)) problems.push({ severity: 'error', line: 1, column: 1, length: 1, message: `Missing required key "${key}".` });
  }
  return problems;
}

import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { loadUserMetrics, parseUserMetric, parseUserRules } from '../core/diagnose/userDiagnostics';
import { CATALOG } from '../core/diagnose/catalog';
import { checkManifest } from '../core/harness/manifest';
import { skillSchema } from '../core/harness/skills';
import type { HarnessFile } from './harnessFiles';
import { lineRange, rangeAt } from './positions';

const SOURCE = 'evotrainer';

const diag = (range: Diagnostic['range'], severity: DiagnosticSeverity, message: string): Diagnostic => ({ range, severity, message, source: SOURCE });

/**
 * The manifest through the engine's own check (checkManifest): every problem at its line
 * and column. Beyond the schema, a metric the harness does not have (primary_metric, a
 * thresholds key) is a warning: the engine would silently never use it.
 */
function manifestDiagnostics(doc: TextDocument, f: HarnessFile): Diagnostic[] {
  const { manifest, problems } = checkManifest(doc.getText());
  const out = problems.map((p) => diag(rangeAt(doc, p.line, p.column, p.length), p.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning, p.message));
  if (!manifest || !f.root) return out;
  const known = knownMetrics(f.root);
  const yaml = parseDocument(doc.getText());
  const warn = (node: unknown, message: string) => {
    if (isNode(node) && node.range) out.push(diag({ start: doc.positionAt(node.range[0]), end: doc.positionAt(node.range[1]) }, DiagnosticSeverity.Warning, message));
  };
  if (manifest.primary_metric !== undefined && !known.has(manifest.primary_metric)) {
    warn(yaml.get('primary_metric', true), `primary_metric: no metric "${manifest.primary_metric}" in the catalog nor in diagnostics/metrics`);
  }
  const thresholds = yaml.get('thresholds', true);
  if (isMap(thresholds)) {
    for (const pair of thresholds.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : '';
      if (!known.has(name)) warn(pair.key, `thresholds.${name}: no metric of that name in the catalog nor in diagnostics/metrics; the threshold is never used`);
    }
  }
  return out;
}

/** Metric names a rule may reference: the catalog and the harness's metric files, as the engine loads them. */
function knownMetrics(root: string | null): Set<string> {
  return new Set([...CATALOG.map((d) => d.name), ...(root ? loadUserMetrics(root).metrics.map((m) => m.name) : [])]);
}

function ruleDiagnostics(doc: TextDocument, f: HarnessFile): Diagnostic[] {
  const file = f.file ?? 'rule.yaml';
  return parseUserRules(file, doc.getText(), knownMetrics(f.root)).problems.map((p) =>
    diag(p.line !== undefined ? rangeAt(doc, p.line, p.column ?? 1, p.length ?? 1) : lineRange(doc, 1), DiagnosticSeverity.Error, p.message),
  );
}

/** A metric file through parseUserMetric: header problems leave the metric usable (warnings); the rest stop it (errors). */
function metricDiagnostics(doc: TextDocument, f: HarnessFile): Diagnostic[] {
  const file = f.file ?? 'metric.sql';
  const r = parseUserMetric(file, doc.getText());
  return r.problems.map((p) => diag(lineRange(doc, p.line ?? 1), r.metric ? DiagnosticSeverity.Warning : DiagnosticSeverity.Error, p.message));
}

/** The range of the node at a path, or of its nearest existing ancestor. */
function nodeAt(doc: Document, p: readonly PropertyKey[]): [number, number] | null {
  let node: unknown = doc.contents;
  let best: [number, number] | null = isNode(node) && node.range ? [node.range[0], node.range[1]] : null;
  for (const seg of p) {
    if (!isMap(node) && !isSeq(node)) break;
    const next: unknown = node.get(seg, true);
    if (next === undefined || next === null) break;
    node = next;
    if (isNode(node) && node.range) best = [node.range[0], node.range[1]];
  }
  return best;
}

/**
 * A skill file against the engine's skillSchema (parseSkill stops at the first problem;
 * the editor shows them all, each at its place in the front matter).
 */
export function skillDiagnostics(doc: TextDocument): Diagnostic[] {
  const text = doc.getText();
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!m) return [diag(lineRange(doc, 1), DiagnosticSeverity.Error, 'A skill starts with YAML front matter between "---" lines (see `evotrainer skill record`).')];
  const base = text.indexOf('\n') + 1;
  const lc = new LineCounter();
  const fm = parseDocument(m[1]!, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const at = (start: number, end: number, message: string) => {
    const pos = doc.positionAt(base + start);
    return diag(rangeAt(doc, pos.line + 1, pos.character + 1, end - start), DiagnosticSeverity.Error, message);
  };
  if (fm.errors.length) return fm.errors.map((e) => at(e.pos[0], e.pos[1], `front matter: ${e.message.split('\n')[0]}`));
  const js: unknown = fm.toJS();
  const parsed = skillSchema.safeParse(js);
  if (parsed.success) return [];
  const out: Diagnostic[] = [];
  const absent = (p: readonly PropertyKey[]) => {
    let v: unknown = js;
    for (const seg of p) {
      if (v === null || typeof v !== 'object' || !(seg in (v as object))) return true;
      v = (v as Record<PropertyKey, unknown>)[seg];
    }
    return false;
  };
  for (const issue of parsed.error.issues) {
    const dotted = issue.path.map(String).join('.') || '(root)';
    // A wrong value is underlined where it is; a missing key on its parent's first line.
    const [s, e] = nodeAt(fm, issue.path) ?? [0, 1];
    const missing = issue.code === 'invalid_type' && absent(issue.path);
    out.push(at(s, e, missing ? `front matter: missing required key "${dotted}"` : `front matter ${dotted}: ${issue.message}`));
  }
  return out;
}

export function diagnosticsFor(doc: TextDocument, f: HarnessFile): Diagnostic[] {
  switch (f.kind) {
    case 'manifest':
      return manifestDiagnostics(doc, f);
    case 'rule':
      return ruleDiagnostics(doc, f);
    case 'metric':
      return metricDiagnostics(doc, f);
    case 'skill':
      return skillDiagnostics(doc);
    case 'python':
      return [];
  }
}

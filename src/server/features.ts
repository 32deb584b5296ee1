import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CompletionItemKind, MarkupKind, type CodeLens, type CompletionItem, type Hover, type Location, type Position, type Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DIMENSIONS, OPS, SEVERITIES, UNITS } from '../core/diagnose/userDiagnostics';
import { manifestJsonSchema } from '../core/harness/manifest';
import { SKILL_CATEGORIES } from '../core/harness/skills';
import { LAYERS } from '../core/harness/versions';
import type { HarnessFile } from './harnessFiles';
import { BUILTIN_METRICS_URI, builtinMetricsDocument, manifestOf, metricsOf, thresholdsOf, type MetricEntry } from './metricIndex';
import { lineBefore, lineText } from './positions';
import type { StoreValues } from './storeValues';
import { yamlCursor } from './yamlCursor';

// ---------------------------------------------------------------- completion

interface JsonSchema {
  description?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
}

let manifestSchemaCache: JsonSchema | undefined;
const manifestSchema = () => (manifestSchemaCache ??= manifestJsonSchema() as JsonSchema);

function schemaAt(path: string[]): JsonSchema | undefined {
  let s: JsonSchema | undefined = manifestSchema();
  for (const seg of path) {
    if (!s) return undefined;
    s = s.properties?.[seg] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined) ?? (s.items?.properties ? s.items : undefined);
  }
  return s;
}

const CONDITION_KEYS: [string, string][] = [
  ['metric', 'Metric the condition reads (built-in or diagnostics/metrics).'],
  ['op', 'Comparison with "value": > >= < <= == !='],
  ['value', 'Number the metric is compared with.'],
  ['trend', '"rising" or "falling" over the last evaluations.'],
  ['over', 'How many evaluations the trend spans (≥ 2; default 3).'],
  ['all', 'Every condition of the list holds.'],
  ['any', 'At least one condition of the list holds.'],
  ['not', 'The condition does not hold.'],
];
const THEN_KEYS: [string, string][] = [
  ['title', 'Finding title.'],
  ['severity', `One of ${SEVERITIES.join(', ')}.`],
  ['layer', 'Intervention layer the finding suggests (reward, filter, environment, …).'],
  ['dimension', `Diagnostic dimension: ${DIMENSIONS.join(', ')}.`],
];
const RULE_KEYS: [string, string][] = [
  ['id', 'Unique rule id (default: the file name).'],
  ['description', 'What the rule detects.'],
  ['when', 'The condition: {metric, op, value}, {metric, trend, over}, all/any/not.'],
  ['then', 'The finding: {title, severity, layer}.'],
];
const METRIC_HEADER_KEYS: [string, string][] = [
  ['description', 'What the metric measures.'],
  ['dimension', DIMENSIONS.join(', ')],
  ['unit', UNITS.join(', ')],
  ['warning', 'Warning threshold, e.g. "> 0.3".'],
  ['critical', 'Critical threshold, e.g. "> 0.5".'],
];

const replaceRange = (pos: Position, typed: number): Range => ({ start: { line: pos.line, character: pos.character - typed }, end: pos });

/** A YAML plain scalar where that is safe, else a double-quoted one. */
const yamlScalar = (s: string) => (/^[A-Za-z0-9_./][\w./+-]*$/.test(s) ? s : JSON.stringify(s));

function valueItems(values: readonly string[], pos: Position, prefix: string, kind: CompletionItemKind = CompletionItemKind.EnumMember, quote = false): CompletionItem[] {
  return values.map((v) => ({ label: v, kind, textEdit: { range: replaceRange(pos, prefix.length), newText: quote && !/^[\w.-]+$/.test(v) ? `'${v}'` : v }, filterText: v }));
}

function keyItems(keys: [string, string | undefined][], pos: Position, prefix: string): CompletionItem[] {
  return keys.map(([k, doc]) => ({ label: k, kind: CompletionItemKind.Property, ...(doc ? { documentation: doc } : {}), textEdit: { range: replaceRange(pos, prefix.length), newText: `${k}: ` } }));
}

function metricItems(root: string | null, pos: Position, prefix: string, asKey = false): CompletionItem[] {
  return metricsOf(root).map((m) => {
    const d = m.builtin ? m.def : m.user;
    return {
      label: m.name,
      kind: m.builtin ? CompletionItemKind.Constant : CompletionItemKind.Variable,
      detail: `${m.builtin ? 'built-in' : `harness metric (${path.basename(m.user.file)})`} · ${d.dimension} · ${d.unit}`,
      documentation: d.description,
      textEdit: { range: replaceRange(pos, prefix.length), newText: asKey ? `${m.name}:` : m.name },
    };
  });
}

/** Files and folders of the harness under the typed prefix (paths relative to the root). */
function pathItems(root: string | null, line: string, pos: Position, prefix: string): CompletionItem[] {
  if (!root) return [];
  const dir = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/') + 1) : '';
  const abs = path.resolve(root, dir);
  if (abs !== root && !abs.startsWith(root + path.sep)) return [];
  let entries: { name: string; dir: boolean }[];
  try {
    entries = readdirSync(abs, { withFileTypes: true })
      .filter((e) => e.name !== '.git')
      .map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    return [];
  }
  // Typed inside quotes: the quote is already there.
  const quoted = /['"]$/.test(line.slice(0, pos.character - prefix.length));
  return entries.map((e) => {
    const rel = `${dir}${e.name}${e.dir ? '/' : ''}`;
    return {
      label: rel,
      kind: e.dir ? CompletionItemKind.Folder : CompletionItemKind.File,
      filterText: rel,
      textEdit: { range: replaceRange(pos, prefix.length), newText: quoted ? rel : yamlScalar(rel) },
      ...(e.dir ? { command: { title: 'Continue', command: 'editor.action.triggerSuggest' } } : {}),
    };
  });
}

function manifestCompletion(doc: TextDocument, f: HarnessFile, pos: Position): CompletionItem[] {
  const lines = doc.getText().split(/\r?\n/);
  const c = yamlCursor(lines, pos.line, pos.character);
  const line = lineText(doc, pos.line);
  if (c.inValue && c.key !== undefined) {
    const p = c.path.join('.');
    if (p === '' && c.key === 'primary_metric') return metricItems(f.root, pos, c.prefix);
    if ((p === 'eval_set' && c.key === 'path') || (p === 'action_boundary' && (c.key === 'editable' || c.key === 'frozen'))) return pathItems(f.root, line, pos, c.prefix);
    if (p === 'skills' && c.key === 'library') return pathItems(f.root, line, pos, c.prefix);
    const s = schemaAt([...c.path, c.key]);
    if (s?.enum) return valueItems(s.enum.map(String), pos, c.prefix, CompletionItemKind.EnumMember, true);
    if (s?.type === 'boolean') return valueItems(['true', 'false'], pos, c.prefix, CompletionItemKind.Value);
    return [];
  }
  if (c.path.length === 1 && c.path[0] === 'thresholds') return metricItems(f.root, pos, c.prefix, true);
  const s = schemaAt(c.path);
  if (!s?.properties) return [];
  return keyItems(Object.entries(s.properties).map(([k, v]) => [k, v.description]), pos, c.prefix);
}

function ruleCompletion(doc: TextDocument, f: HarnessFile, pos: Position): CompletionItem[] {
  const c = yamlCursor(doc.getText().split(/\r?\n/), pos.line, pos.character);
  if (c.inValue) {
    switch (c.key) {
      case 'metric':
        return metricItems(f.root, pos, c.prefix);
      case 'op':
        return valueItems(OPS, pos, c.prefix, CompletionItemKind.Operator, true);
      case 'trend':
        return valueItems(['rising', 'falling'], pos, c.prefix);
      case 'severity':
        return valueItems(SEVERITIES, pos, c.prefix);
      case 'dimension':
        return valueItems(DIMENSIONS, pos, c.prefix);
      case 'layer':
        return valueItems(LAYERS, pos, c.prefix);
      default:
        return [];
    }
  }
  if (c.path.at(-1) === 'then') return keyItems(THEN_KEYS, pos, c.prefix);
  if (c.flow || c.path.includes('when')) return keyItems(CONDITION_KEYS, pos, c.prefix);
  return keyItems(RULE_KEYS, pos, c.prefix);
}

function metricFileCompletion(doc: TextDocument, pos: Position): CompletionItem[] {
  // Only in the leading comment block, where the header lives.
  for (let i = 0; i < pos.line; i++) {
    const l = lineText(doc, i).trim();
    if (l && !l.startsWith('--') && !l.startsWith('#')) return [];
  }
  const before = lineBefore(doc, pos.line, pos.character);
  const v = /^\s*(?:--|#)\s*(dimension|unit|warning|critical)\s*:\s*(\S*)$/i.exec(before);
  if (v) {
    const key = v[1]!.toLowerCase();
    const values = key === 'dimension' ? DIMENSIONS : key === 'unit' ? UNITS : ['>', '>=', '<', '<='];
    return valueItems(values, pos, v[2]!);
  }
  const k = /^\s*(?:--|#)\s*(\w*)$/.exec(before);
  if (k) return keyItems(METRIC_HEADER_KEYS, pos, k[1]!);
  return [];
}

function skillCompletion(doc: TextDocument, f: HarnessFile, pos: Position): CompletionItem[] {
  const lines = doc.getText().split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return [];
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (pos.line === 0 || (close !== -1 && pos.line >= close)) return [];
  const c = yamlCursor(lines.slice(1), pos.line - 1, pos.character);
  if (!c.inValue) return [];
  if (c.key === 'category') return valueItems(SKILL_CATEGORIES, pos, c.prefix);
  if (c.key === 'layer') return valueItems(LAYERS, pos, c.prefix);
  if (c.key === 'target_metric') return metricItems(f.root, pos, c.prefix);
  return [];
}

export function completion(doc: TextDocument, f: HarnessFile, pos: Position): CompletionItem[] {
  switch (f.kind) {
    case 'manifest':
      return manifestCompletion(doc, f, pos);
    case 'rule':
      return ruleCompletion(doc, f, pos);
    case 'metric':
      return metricFileCompletion(doc, pos);
    case 'skill':
      return skillCompletion(doc, f, pos);
    default:
      return [];
  }
}

// ---------------------------------------------------------------- metric references

/** The metric named at a position: a rule's `metric:`, the manifest's primary_metric or thresholds key, a skill's target_metric. */
export function metricRefAt(doc: TextDocument, f: HarnessFile, pos: Position): { name: string; range: Range } | null {
  const line = lineText(doc, pos.line);
  const re = /[A-Za-z0-9_.-]+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) {
    if (m.index > pos.character || m.index + m[0].length < pos.character) continue;
    const before = line.slice(0, m.index);
    const range = { start: { line: pos.line, character: m.index }, end: { line: pos.line, character: m.index + m[0].length } };
    const ref = { name: m[0], range };
    if (f.kind === 'rule' && /(?:^|[\s{,])metric\s*:\s*['"]?$/.test(before)) return ref;
    if (f.kind === 'skill' && /^\s*target_metric\s*:\s*['"]?$/.test(before)) return ref;
    if (f.kind === 'manifest') {
      if (/^primary_metric\s*:\s*['"]?$/.test(before)) return ref;
      const after = line.slice(m.index + m[0].length);
      if (/^\s+$/.test(before) && /^['"]?\s*:/.test(after)) {
        const c = yamlCursor(doc.getText().split(/\r?\n/), pos.line, m.index);
        if (c.path.length === 1 && c.path[0] === 'thresholds') return ref;
      }
    }
    return null;
  }
  return null;
}

// ---------------------------------------------------------------- hover

/** Markdown-inert text: rollout-derived or harness-written text is shown, never interpreted. */
const esc = (s: string) => s.replace(/[\\`*_{}[\]<>#|~]/g, (c) => `\\${c}`).replace(/^([-+=]|\d+\.)/, (c) => `\\${c}`);

function fence(code: string, lang: string): string {
  const ticks = '`'.repeat(Math.max(3, ...(code.match(/`+/g) ?? []).map((t) => t.length + 1)));
  return `${ticks}${lang}\n${code}\n${ticks}`;
}

const fmtValue = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(1) : Number(v.toPrecision(4)).toString());

export async function metricHover(f: HarnessFile, entry: MetricEntry, values: StoreValues): Promise<string> {
  const d = entry.builtin ? entry.def : entry.user;
  const manifest = manifestOf(f.root);
  const th = thresholdsOf(entry, manifest);
  const out: string[] = [];
  out.push(`**${esc(entry.name)}** · ${entry.builtin ? 'built-in metric' : `harness metric (${esc(path.basename(entry.user.file))})`} · ${d.dimension} · ${d.unit}`);
  out.push(esc(d.description));
  if (th.thresholds.length) out.push(`Thresholds: ${th.thresholds.map((t) => `${t.severity} ${t.op} ${t.value}`).join(', ')}${th.from === 'manifest' ? ' (evotrainer.yaml)' : ''}`);
  if (f.root) {
    const v = await values.latest(f.root, entry, manifest);
    if (v.kind === 'value') {
      const val = v.result.value === null ? 'not available in this data' : `**${fmtValue(v.result.value)}**`;
      const status = v.result.status === 'warning' || v.result.status === 'critical' ? ` (${v.result.status})` : '';
      out.push(`Latest value: ${val}${status} — run ${esc(v.run)}${v.version ? `, version ${esc(v.version)}` : ''}, ${v.rollouts} rollouts`);
    } else out.push(`Latest value: ${esc(v.reason)}`);
  }
  if (entry.builtin) out.push(fence(`-- aggregate over ${entry.def.source}\n${entry.def.sql}`, 'sql'));
  else if (entry.user.script) out.push('A python3 script reading rollout features as JSON lines.');
  else out.push(fence(entry.user.sql.split('\n').slice(0, 30).join('\n'), 'sql'));
  return out.join('\n\n');
}

export async function hover(doc: TextDocument, f: HarnessFile, pos: Position, values: StoreValues): Promise<Hover | null> {
  const ref = metricRefAt(doc, f, pos);
  if (ref) {
    const entry = metricsOf(f.root).find((m) => m.name === ref.name);
    if (!entry) return { range: ref.range, contents: { kind: MarkupKind.Markdown, value: `**${esc(ref.name)}**: unknown metric (not in the catalog nor in diagnostics/metrics)` } };
    return { range: ref.range, contents: { kind: MarkupKind.Markdown, value: await metricHover(f, entry, values) } };
  }
  if (f.kind === 'manifest') {
    // A key of the manifest: its description from the schema.
    const line = lineText(doc, pos.line);
    const k = /^(\s*)(?:-\s+)*([\w.-]+)\s*:/.exec(line);
    if (k && pos.character >= k[0].indexOf(k[2]!) && pos.character <= k[0].indexOf(k[2]!) + k[2]!.length) {
      const start = k[0].indexOf(k[2]!);
      const c = yamlCursor(doc.getText().split(/\r?\n/), pos.line, start);
      const s = schemaAt([...c.path, k[2]!]);
      if (s?.description) return { range: { start: { line: pos.line, character: start }, end: { line: pos.line, character: start + k[2]!.length } }, contents: { kind: MarkupKind.Markdown, value: `**${esc(k[2]!)}**: ${esc(s.description)}` } };
    }
  }
  return null;
}

// ---------------------------------------------------------------- definition

export function definition(doc: TextDocument, f: HarnessFile, pos: Position): Location | null {
  const ref = metricRefAt(doc, f, pos);
  if (!ref) return null;
  const entry = metricsOf(f.root).find((m) => m.name === ref.name);
  if (!entry) return null;
  if (!entry.builtin) return { uri: pathToFileURL(entry.user.file).href, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } };
  const line = builtinMetricsDocument().lines.get(entry.name) ?? 0;
  return { uri: BUILTIN_METRICS_URI, range: { start: { line, character: 0 }, end: { line, character: entry.name.length } } };
}

// ---------------------------------------------------------------- code lenses

/** Entry points the trainers call: verl's compute_score, the group/trajectory filters, TRL reward functions. */
const ENTRY_POINTS = new Set(['compute_score', 'keep_group', 'keep_trajectory']);

export const BACKTEST_COMMAND = 'evotrainer.backtestVersion';

/**
 * "Backtest this change" above each reward or filter function of reward/ and filters/:
 * top-level `def compute_score`, `def keep_group`, `def keep_trajectory`, and TRL reward
 * functions (a `completions` parameter, as TRL calls them).
 */
export function codeLenses(doc: TextDocument, f: HarnessFile): CodeLens[] {
  if (f.kind !== 'python') return [];
  const lines = doc.getText().split(/\r?\n/);
  const out: CodeLens[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/.exec(lines[i]!);
    if (!m) continue;
    // The parameter list, possibly over several lines.
    let params = lines[i]!.slice(m[0].length);
    for (let j = i + 1; j < Math.min(lines.length, i + 30) && !params.includes(')'); j++) params += ` ${lines[j]}`;
    params = params.slice(0, params.indexOf(')') === -1 ? undefined : params.indexOf(')'));
    const name = m[1]!;
    const trl = params.split(',').some((p) => /^\s*\*{0,2}completions\s*(?::|=|$)/.test(p));
    if (!ENTRY_POINTS.has(name) && !trl) continue;
    const start = lines[i]!.indexOf(name);
    out.push({
      range: { start: { line: i, character: start }, end: { line: i, character: start + name.length } },
      command: { title: 'Backtest this change', command: BACKTEST_COMMAND, arguments: [{ file: f.file, function: name }] },
    });
  }
  return out;
}

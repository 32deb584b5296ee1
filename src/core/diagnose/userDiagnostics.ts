/**
 * The harness's own diagnostics, evaluated next to the built-ins:
 *
 * - `diagnostics/metrics/*.sql`: one SELECT over the documented views `rollouts`, `steps`
 *   and `rollout_features`, returning one row per rollout (`id, value`; the metric is their
 *   mean) or a single row (`value`). Leading `-- key: value` comments describe it:
 *     -- description: Share of trajectories that edit more than five times
 *     -- dimension: behavior        (results, signal, behavior, efficiency, model_state, test_structure, sampling)
 *     -- unit: ratio                (ratio, count, tokens, turns, score, nats, correlation)
 *     -- warning: > 0.3
 *     -- critical: > 0.5
 *   The name is the file name. The views are narrowed to the scope (run, version, split,
 *   steps) before the query runs, so a metric needs no WHERE of its own.
 * - `diagnostics/metrics/*.py`: a script, run with python3 (EVOTRAINER_PYTHON), reading the
 *   scoped `rollout_features` rows as JSON lines on stdin and printing `{"value": x}`, or
 *   `{"id": …, "value": x}` per rollout; `# key: value` header comments as above. A script is
 *   harness code: it runs only when the caller has the user's consent (`trust`); otherwise it
 *   is reported as a problem saying how to allow it, and everything else still runs. With
 *   consent it runs confined like backtest workers (src/core/backtest/confine.ts).
 * - `diagnostics/rules/*.yaml`: IF/THEN rules over built-in and user metrics and their trends:
 *     id: slow-first-edit
 *     when:
 *       all:
 *         - {metric: first_edit_turn, op: '>', value: 10}
 *         - {metric: turns, trend: rising, over: 3}
 *         - any: [{metric: pass_rate, op: '<', value: 0.5}, {metric: my_metric, op: '>=', value: 1}]
 *     then: {title: Slow to start editing, severity: warning, layer: behavior}
 *   A file holds one rule, a list of rules, or `rules: [...]`.
 *
 * A broken metric or rule is reported with its file (and line, where there is one) and
 * everything else still runs.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import type { Dimension, Finding, Metric, Severity, Threshold } from '../model';
import { confinement, workerIsolation } from '../backtest/confine';
import { workerScript } from '../backtest/pool';
import type { RolloutStore } from '../store/store';
import { CATALOG } from './catalog';
import { computeHealth, computeSeries, type HealthReport, type MetricResult, type Scope, type SeriesPoint } from './health';
import { refuseMetricSql } from './metricSql';

export interface DiagnosticProblem {
  kind: 'metric' | 'rule';
  file: string;
  /** 1-based, where known. */
  line?: number;
  column?: number;
  /** Characters from line:column that the problem spans (the editor underlines them), where known. */
  length?: number;
  message: string;
}

export interface UserMetric {
  name: string;
  file: string;
  /** The SELECT of a .sql metric; empty for a script. */
  sql: string;
  /** A .py metric: run with python3, reading rollout features as JSON lines on stdin. */
  script?: boolean;
  description: string;
  dimension: Dimension;
  unit: Metric['unit'];
  thresholds: Threshold[];
}

type Op = '>' | '>=' | '<' | '<=' | '==' | '!=';
export type Condition =
  | { kind: 'compare'; metric: string; op: Op; value: number; line?: number }
  | { kind: 'trend'; metric: string; direction: 'rising' | 'falling'; over: number; line?: number }
  | { kind: 'all' | 'any'; of: Condition[] }
  | { kind: 'not'; of: Condition };

export interface UserRule {
  id: string;
  file: string;
  line: number;
  when: Condition;
  title: string;
  severity: Severity;
  layer: string;
  dimension?: Dimension;
}

export interface UserDiagnostics {
  metrics: MetricResult[];
  findings: Finding[];
  problems: DiagnosticProblem[];
  /** What loaded: metric names and rule ids. */
  loaded: { metrics: string[]; rules: string[] };
  /** Rules that could not be decided because a metric had no value here. */
  notes: string[];
}

export const DIMENSIONS: Dimension[] = ['results', 'signal', 'behavior', 'efficiency', 'model_state', 'test_structure', 'sampling'];
export const UNITS: Metric['unit'][] = ['ratio', 'count', 'tokens', 'turns', 'score', 'nats', 'correlation'];
export const OPS: Op[] = ['>', '>=', '<', '<=', '==', '!='];
export const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];

function listDir(dir: string, re: RegExp): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => re.test(f))
      .sort()
      .map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- metrics

/** Masks comments and string literals (same length), to look at the SQL's structure. */
function maskSql(sql: string): string {
  return sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (m) => m.replace(/[^\n]/g, ' '));
}

export function parseUserMetric(file: string, text: string): { metric?: UserMetric; problems: DiagnosticProblem[] } {
  const problems: DiagnosticProblem[] = [];
  const script = /\.py$/i.test(file);
  const name = path.basename(file).replace(/\.(sql|py)$/i, '');
  const m: UserMetric = { name, file, sql: '', script, description: `user metric (${path.basename(file)})`, dimension: 'behavior', unit: 'score', thresholds: [] };
  const comment = script ? '#' : '--';
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (!l || (script && l.startsWith('#!'))) continue;
    if (!l.startsWith(comment)) break;
    const kv = new RegExp(`^${comment}\\s*([A-Za-z_]+)\\s*:\\s*(.*)$`).exec(l);
    if (!kv) continue;
    const key = kv[1]!.toLowerCase();
    const v = kv[2]!.trim();
    const at = { kind: 'metric' as const, file, line: i + 1 };
    if (key === 'description') m.description = v;
    else if (key === 'dimension') {
      if (DIMENSIONS.includes(v as Dimension)) m.dimension = v as Dimension;
      else problems.push({ ...at, message: `unknown dimension "${v}" (one of ${DIMENSIONS.join(', ')})` });
    } else if (key === 'unit') {
      if (UNITS.includes(v as Metric['unit'])) m.unit = v as Metric['unit'];
      else problems.push({ ...at, message: `unknown unit "${v}" (one of ${UNITS.join(', ')})` });
    } else if (key === 'warning' || key === 'critical') {
      const t = /^(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)$/i.exec(v);
      if (t) m.thresholds.push({ severity: key, op: t[1] as Threshold['op'], value: Number(t[2]) });
      else problems.push({ ...at, message: `${key} threshold must look like "> 0.3", got "${v}"` });
    } else if (key !== 'name') problems.push({ ...at, message: `unknown header key "${key}" (description, dimension, unit, warning, critical)` });
  }
  if (script) {
    if (CATALOG.some((d) => d.name === name)) return { problems: [...problems, { kind: 'metric', file, message: `"${name}" is a built-in metric; rename the file` }] };
    return { metric: m, problems };
  }
  let sql = text.replace(/\s+$/, '');
  const masked = maskSql(sql);
  const trailing = /;\s*$/.exec(masked);
  if (trailing) sql = sql.slice(0, trailing.index);
  const body = maskSql(sql);
  const semi = body.indexOf(';');
  if (semi !== -1) {
    problems.push({ kind: 'metric', file, line: body.slice(0, semi).split('\n').length, message: 'holds more than one statement; a metric is one SELECT' });
    return { problems };
  }
  const first = /^\s*([A-Za-z(]+)/.exec(body)?.[1]?.toLowerCase() ?? '';
  if (!['select', 'with', 'from', '('].some((k) => first.startsWith(k))) {
    problems.push({ kind: 'metric', file, line: body.split('\n').findIndex((l) => l.trim()) + 1 || 1, message: body.trim() ? `must be one SELECT over the views rollouts, steps, rollout_features (starts with "${first}")` : 'holds no query' });
    return { problems };
  }
  m.sql = sql;
  if (CATALOG.some((d) => d.name === name)) {
    problems.push({ kind: 'metric', file, message: `"${name}" is a built-in metric; rename the file` });
    return { problems };
  }
  return { metric: m, problems };
}

export function loadUserMetrics(harnessRoot: string): { metrics: UserMetric[]; problems: DiagnosticProblem[] } {
  const metrics: UserMetric[] = [];
  const problems: DiagnosticProblem[] = [];
  for (const file of listDir(path.join(harnessRoot, 'diagnostics', 'metrics'), /\.(sql|py)$/i)) {
    const r = parseUserMetric(file, readFileSync(file, 'utf8'));
    problems.push(...r.problems);
    if (r.metric) metrics.push(r.metric);
  }
  return { metrics, problems };
}

/** Maps DuckDB's "LINE N:" (of the wrapped query, one line below the file's first) to the file. */
function sqlProblem(m: UserMetric, err: unknown): DiagnosticProblem {
  const msg = (err as Error).message;
  const line = /LINE (\d+):/.exec(msg);
  const first = msg.split('\n')[0]!;
  return { kind: 'metric', file: m.file, ...(line ? { line: Math.max(1, Number(line[1]) - 1) } : {}), message: `SQL error: ${first}` };
}

/** A user metric's value over the (already scoped) views, once its query is known to read only them (see metricSql). */
async function evaluateMetricSql(store: RolloutStore, m: UserMetric): Promise<{ value: number | null; rows: number } | { problem: DiagnosticProblem }> {
  const refused = await refuseMetricSql(m.sql, async (sql, params) => Object.values((await store.one(sql, params)) ?? {})[0]);
  if (refused) return { problem: { kind: 'metric', file: m.file, ...(refused.offset !== null ? { line: m.sql.slice(0, refused.offset).split('\n').length } : {}), message: refused.message } };
  const out = { name: 'user_metric_out', select: `select * from (\n${m.sql}\n) user_metric` };
  return store.withTempTables([out], () => valueOf(store, m)).catch((err: unknown) => ({ problem: sqlProblem(m, err) }));
}

/** The value of a user metric whose rows are in user_metric_out. */
async function valueOf(store: RolloutStore, m: UserMetric): Promise<{ value: number | null; rows: number } | { problem: DiagnosticProblem }> {
  const cols = await store.columnsOf('select * from user_metric_out');
  if (!cols.includes('value')) return { problem: { kind: 'metric', file: m.file, message: `returns no "value" column (columns: ${cols.join(', ')}); return id, value per rollout or a single value` } };
  if (cols.includes('id')) {
    const r = (await store.one<{ v: number | null; n: number; ids: number }>('select avg(value::double) as v, count(value) as n, count(distinct id) as ids from user_metric_out'))!;
    const total = (await store.one<{ n: number }>('select count(*) as n from user_metric_out'))!.n;
    if (r.ids !== total) return { problem: { kind: 'metric', file: m.file, message: `returns ${total} rows for ${r.ids} distinct ids; a per-rollout metric returns one row per rollout` } };
    return { value: r.v !== null && Number.isFinite(r.v) ? r.v : null, rows: Number(r.n) };
  }
  const rows = await store.all<{ v: number | null }>('select value::double as v from user_metric_out limit 2');
  if (rows.length > 1) return { problem: { kind: 'metric', file: m.file, message: 'returns several rows but no "id" column: return one row per rollout (id, value) or a single aggregate value' } };
  const v = rows[0]?.v ?? null;
  return { value: v !== null && Number.isFinite(v) ? v : null, rows: rows.length };
}

/**
 * A script metric: python3 reads the (scoped) rollout features as JSON lines on stdin and
 * prints either one `{"value": x}` or one `{"id": …, "value": x}` line per rollout (the
 * metric is their mean). Harness code: it runs only where the caller allows harness code.
 */
async function evaluateMetricScript(store: RolloutStore, m: UserMetric): Promise<{ value: number | null; rows: number } | { problem: DiagnosticProblem }> {
  const rows = await store.all<Record<string, unknown>>('select * from rollout_features order by id');
  const input = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const python = process.env.EVOTRAINER_PYTHON || 'python3';
  // Confined as backtest workers are (scrubbed environment, no network, read-only filesystem but a scratch folder).
  const isolation = await workerIsolation(python, workerScript());
  const scratch = mkdtempSync(path.join(tmpdir(), 'evotrainer-metric-'));
  const { confine, env } = confinement(isolation, scratch, []);
  const cmd = [...isolation.prefix, python, workerScript(), '--script', JSON.stringify(confine), m.file];
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string; error?: string }>((resolve) => {
    const child = execFile(cmd[0]!, cmd.slice(1), { timeout: 60_000, maxBuffer: 64 * 1024 * 1024, env }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr, error: e?.killed ? 'timed out after 60 s' : typeof e?.code === 'string' ? e.code : undefined });
    });
    child.stdin?.on('error', () => undefined); // a script that exits without reading
    child.stdin?.end(input);
  }).finally(() => rmSync(scratch, { recursive: true, force: true }));
  if (r.code !== 0) {
    const tb = [...r.stderr.matchAll(/File "([^"]+)", line (\d+)/g)].filter((x) => path.resolve(x[1]!) === path.resolve(m.file)).pop();
    const last = r.stderr.trim().split('\n').pop() ?? '';
    return { problem: { kind: 'metric', file: m.file, ...(tb ? { line: Number(tb[2]) } : {}), message: `script failed (${r.error ?? `exit ${r.code}`}): ${last || 'no message'}` } };
  }
  const out = r.stdout.split('\n').filter((l) => l.trim());
  const values: number[] = [];
  for (const [i, l] of out.entries()) {
    let v: unknown;
    try {
      v = (JSON.parse(l) as { value?: unknown }).value;
    } catch {
      return { problem: { kind: 'metric', file: m.file, message: `output line ${i + 1} is not JSON ({"value": x} or {"id": …, "value": x} per line): ${l.slice(0, 80)}` } };
    }
    if (v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return { problem: { kind: 'metric', file: m.file, message: `output line ${i + 1}: "value" must be a number` } };
    values.push(v);
  }
  return { value: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null, rows: values.length };
}

function compare(op: Op | Threshold['op'], a: number, b: number): boolean {
  switch (op) {
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '==':
      return a === b;
    case '!=':
      return a !== b;
  }
}

function statusOf(m: UserMetric, value: number | null): Pick<MetricResult, 'status' | 'threshold'> {
  if (value === null) return { status: 'n/a' };
  const hit = [...m.thresholds].sort((a, b) => (a.severity === 'critical' ? 0 : 1) - (b.severity === 'critical' ? 0 : 1)).find((t) => compare(t.op, value, t.value));
  return hit ? { status: hit.severity, threshold: hit } : { status: 'ok' };
}

/** Why a script metric did not run without consent, and how to give it. */
export const UNTRUSTED_SCRIPT = 'a script metric runs harness code on this machine: pass --trust to run it (in the editor: trust the workspace)';

/**
 * Values of user metrics over a scope; a failing metric becomes a problem, the others still
 * run. Script metrics run only with `trust` (the user's consent to run harness code).
 */
export async function computeUserMetrics(store: RolloutStore, metrics: UserMetric[], scope: Scope = {}, trust = false): Promise<{ results: MetricResult[]; problems: DiagnosticProblem[] }> {
  await store.ensureDerivedViews();
  const results: MetricResult[] = [];
  const problems: DiagnosticProblem[] = [];
  await store.withScopedViews(scope, async () => {
    for (const m of metrics) {
      if (m.script && !trust) {
        problems.push({ kind: 'metric', file: m.file, message: UNTRUSTED_SCRIPT });
        continue;
      }
      const r = m.script ? await evaluateMetricScript(store, m) : await evaluateMetricSql(store, m);
      if ('problem' in r) {
        problems.push(r.problem);
        continue;
      }
      results.push({ name: m.name, dimension: m.dimension, unit: m.unit, description: m.description, value: r.value, ...statusOf(m, r.value) });
    }
  });
  return { results, problems };
}

// ---------------------------------------------------------------- rules

interface Located {
  path: (string | number)[];
  message: string;
}

function nodeLine(doc: Document, lc: LineCounter, p: (string | number)[]): { line: number; column: number; length?: number } {
  for (let k = p.length; k >= 0; k--) {
    const node = (k === 0 ? doc.contents : doc.getIn(p.slice(0, k), true)) as { range?: [number, number, number] } | null | undefined;
    if (node && typeof node === 'object' && node.range) {
      const pos = lc.linePos(node.range[0]);
      return { line: pos.line, column: pos.col, length: Math.max(1, node.range[1] - node.range[0]) };
    }
  }
  return { line: 1, column: 1 };
}

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function parseCondition(x: unknown, p: (string | number)[], errs: Located[], known: Set<string>, lineOf: (p: (string | number)[]) => number): Condition | null {
  if (!isObj(x)) {
    errs.push({ path: p, message: 'a condition is a mapping: {metric, op, value}, {metric, trend, over}, {all: [...]}, {any: [...]} or {not: ...}' });
    return null;
  }
  const keys = Object.keys(x);
  for (const comb of ['all', 'any'] as const) {
    if (comb in x) {
      if (keys.length !== 1) errs.push({ path: p, message: `"${comb}" stands alone in its mapping (found also ${keys.filter((k) => k !== comb).join(', ')})` });
      const list = x[comb];
      if (!Array.isArray(list) || !list.length) {
        errs.push({ path: [...p, comb], message: `"${comb}" takes a non-empty list of conditions` });
        return null;
      }
      const of = list.map((c, i) => parseCondition(c, [...p, comb, i], errs, known, lineOf));
      return of.every((c): c is Condition => c !== null) ? { kind: comb, of } : null;
    }
  }
  if ('not' in x) {
    const c = parseCondition(x.not, [...p, 'not'], errs, known, lineOf);
    return c ? { kind: 'not', of: c } : null;
  }
  const metric = x.metric;
  if (typeof metric !== 'string' || !metric) {
    errs.push({ path: p, message: 'a condition names a "metric" (or combines conditions with all/any/not)' });
    return null;
  }
  if (!known.has(metric)) {
    errs.push({ path: [...p, 'metric'], message: `unknown metric "${metric}" (not in the catalog nor in diagnostics/metrics)` });
    return null;
  }
  const line = lineOf(p);
  const allowed = new Set(['metric', 'op', 'value', 'trend', 'over']);
  for (const k of keys) if (!allowed.has(k)) errs.push({ path: [...p, k], message: `unknown key "${k}" in a condition (metric, op, value, trend, over)` });
  if ('trend' in x) {
    let dir = x.trend;
    let over: unknown = x.over ?? 3;
    const m = typeof dir === 'string' ? /^(rising|falling)(?:\s+over\s+(\d+))?$/.exec(dir.trim()) : null;
    if (!m) {
      errs.push({ path: [...p, 'trend'], message: `trend is "rising" or "falling" (optionally "rising over N"), got ${JSON.stringify(dir)}` });
      return null;
    }
    dir = m[1];
    if (m[2]) over = Number(m[2]);
    if (typeof over !== 'number' || !Number.isInteger(over) || over < 2) {
      errs.push({ path: [...p, 'over'], message: `"over" is a whole number of evaluations ≥ 2, got ${JSON.stringify(over)}` });
      return null;
    }
    return { kind: 'trend', metric, direction: dir as 'rising' | 'falling', over, line };
  }
  const op = x.op;
  const value = x.value;
  if (typeof op !== 'string' || !OPS.includes(op as Op)) {
    errs.push({ path: 'op' in x ? [...p, 'op'] : p, message: `"op" is one of ${OPS.join(' ')}, got ${JSON.stringify(op)}` });
    return null;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    errs.push({ path: 'value' in x ? [...p, 'value'] : p, message: `"value" is a number, got ${JSON.stringify(value)}` });
    return null;
  }
  return { kind: 'compare', metric, op: op as Op, value, line };
}

/** Parses a rules file; each problem carries its line and column. */
export function parseUserRules(file: string, text: string, knownMetrics: Set<string>): { rules: UserRule[]; problems: DiagnosticProblem[] } {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    return {
      rules: [],
      problems: doc.errors.map((e) => {
        const pos = lc.linePos(e.pos[0]);
        return { kind: 'rule', file, line: pos.line, column: pos.col, length: Math.max(1, e.pos[1] - e.pos[0]), message: `YAML: ${e.message.split('\n')[0]}` };
      }),
    };
  }
  const js: unknown = doc.toJS();
  const problems: DiagnosticProblem[] = [];
  const at = (p: (string | number)[], message: string): DiagnosticProblem => ({ kind: 'rule', file, ...nodeLine(doc, lc, p), message });
  let list: { value: unknown; path: (string | number)[] }[];
  if (Array.isArray(js)) list = js.map((value, i) => ({ value, path: [i] }));
  else if (isObj(js) && Array.isArray(js.rules) && !('when' in js)) list = js.rules.map((value, i) => ({ value, path: ['rules', i] }));
  else if (isObj(js)) list = [{ value: js, path: [] }];
  else return { rules: [], problems: [at([], 'a rules file holds a rule (when/then), a list of rules, or rules: [...]')] };
  const base = path.basename(file).replace(/\.ya?ml$/i, '');
  const rules: UserRule[] = [];
  list.forEach(({ value, path: p }, i) => {
    const errs: Located[] = [];
    if (!isObj(value)) {
      problems.push(at(p, 'a rule is a mapping with "when" and "then"'));
      return;
    }
    for (const k of Object.keys(value)) if (!['id', 'title', 'description', 'when', 'then'].includes(k)) errs.push({ path: [...p, k], message: `unknown key "${k}" in a rule (id, description, when, then)` });
    const id = typeof value.id === 'string' && value.id ? value.id : list.length > 1 ? `${base}#${i + 1}` : base;
    let when: Condition | null = null;
    if (!('when' in value)) errs.push({ path: p, message: 'a rule needs "when"' });
    else when = parseCondition(value.when, [...p, 'when'], errs, knownMetrics, (q) => nodeLine(doc, lc, q).line);
    const then = value.then;
    let title = '';
    let severity: Severity = 'warning';
    let layer = '';
    let dimension: Dimension | undefined;
    if (!isObj(then)) errs.push({ path: 'then' in value ? [...p, 'then'] : p, message: 'a rule needs "then: {title, severity, layer}"' });
    else {
      for (const k of Object.keys(then)) if (!['title', 'severity', 'layer', 'dimension'].includes(k)) errs.push({ path: [...p, 'then', k], message: `unknown key "${k}" in then (title, severity, layer, dimension)` });
      if (typeof then.title !== 'string' || !then.title.trim()) errs.push({ path: [...p, 'then', ...('title' in then ? ['title'] : [])], message: 'then.title is required text' });
      else title = then.title;
      if (!SEVERITIES.includes(then.severity as Severity)) errs.push({ path: [...p, 'then', ...('severity' in then ? ['severity'] : [])], message: `then.severity is one of ${SEVERITIES.join(', ')}, got ${JSON.stringify(then.severity)}` });
      else severity = then.severity as Severity;
      if (typeof then.layer !== 'string' || !then.layer.trim()) errs.push({ path: [...p, 'then', ...('layer' in then ? ['layer'] : [])], message: 'then.layer names the intervention layer (reward, filter, environment, signal, behavior, data, infra, eval, …)' });
      else layer = then.layer;
      if (then.dimension !== undefined) {
        if (DIMENSIONS.includes(then.dimension as Dimension)) dimension = then.dimension as Dimension;
        else errs.push({ path: [...p, 'then', 'dimension'], message: `then.dimension is one of ${DIMENSIONS.join(', ')}` });
      }
    }
    if (errs.length || !when) {
      problems.push(...errs.map((e) => at(e.path, `rule "${id}": ${e.message}`)));
      return;
    }
    rules.push({ id, file, line: nodeLine(doc, lc, p).line, when, title, severity, layer, ...(dimension ? { dimension } : {}) });
  });
  return { rules, problems };
}

export function loadUserRules(harnessRoot: string, knownMetrics: Set<string>): { rules: UserRule[]; problems: DiagnosticProblem[] } {
  const rules: UserRule[] = [];
  const problems: DiagnosticProblem[] = [];
  const seen = new Map<string, string>();
  for (const file of listDir(path.join(harnessRoot, 'diagnostics', 'rules'), /\.ya?ml$/i)) {
    const r = parseUserRules(file, readFileSync(file, 'utf8'), knownMetrics);
    problems.push(...r.problems);
    for (const rule of r.rules) {
      const prev = seen.get(rule.id);
      if (prev) {
        problems.push({ kind: 'rule', file, line: rule.line, message: `rule id "${rule.id}" is already defined in ${path.basename(prev)}; ids are unique` });
        continue;
      }
      seen.set(rule.id, file);
      rules.push(rule);
    }
  }
  return { rules, problems };
}

function metricsOf(c: Condition, out: { now: Set<string>; trend: Set<string> }): typeof out {
  if (c.kind === 'compare') out.now.add(c.metric);
  else if (c.kind === 'trend') out.trend.add(c.metric);
  else if (c.kind === 'not') metricsOf(c.of, out);
  else for (const x of c.of) metricsOf(x, out);
  return out;
}

const fmt = (x: number | null) => (x === null ? 'n/a' : Math.abs(x) >= 10 ? x.toFixed(1) : Number(x.toFixed(4)).toString());

interface Verdict {
  /** null = undecidable (a metric had no value, or too few evaluations). */
  fired: boolean | null;
  details: string[];
  evidence: Record<string, number | null>;
  missing: string[];
}

function check(c: Condition, now: Map<string, number | null>, series: Map<string, number[]>): Verdict {
  if (c.kind === 'compare') {
    const v = now.get(c.metric) ?? null;
    if (v === null) return { fired: null, details: [], evidence: { [c.metric]: null }, missing: [`${c.metric} has no value`] };
    const ok = compare(c.op, v, c.value);
    return { fired: ok, details: [`${c.metric} ${fmt(v)} ${c.op} ${c.value}${ok ? '' : ' is false'}`], evidence: { [c.metric]: v }, missing: [] };
  }
  if (c.kind === 'trend') {
    const xs = series.get(c.metric) ?? [];
    if (xs.length < c.over) return { fired: null, details: [], evidence: {}, missing: [`${c.metric} has ${xs.length} evaluation(s), the trend needs ${c.over}`] };
    const last = xs.slice(-c.over);
    const ok = last.every((x, i) => i === 0 || (c.direction === 'rising' ? x > last[i - 1]! : x < last[i - 1]!));
    return { fired: ok, details: [`${c.metric} ${c.direction} over ${c.over}: ${last.map(fmt).join(' → ')}`], evidence: { [`${c.metric}_first`]: last[0]!, [`${c.metric}_last`]: last.at(-1)! }, missing: [] };
  }
  if (c.kind === 'not') {
    const v = check(c.of, now, series);
    return { ...v, fired: v.fired === null ? null : !v.fired, details: v.details.map((d) => `not (${d})`) };
  }
  const vs = c.of.map((x) => check(x, now, series));
  const merge = (sel: Verdict[]): Omit<Verdict, 'fired'> => ({ details: sel.flatMap((v) => v.details), evidence: Object.assign({}, ...sel.map((v) => v.evidence)) as Record<string, number | null>, missing: vs.flatMap((v) => v.missing) });
  if (c.kind === 'all') {
    if (vs.some((v) => v.fired === false)) return { fired: false, ...merge(vs) };
    if (vs.some((v) => v.fired === null)) return { fired: null, ...merge(vs) };
    return { fired: true, ...merge(vs) };
  }
  const hits = vs.filter((v) => v.fired === true);
  if (hits.length) return { fired: true, ...merge(hits) };
  if (vs.some((v) => v.fired === null)) return { fired: null, ...merge(vs) };
  return { fired: false, ...merge(vs) };
}

export interface UserDiagnosticsOptions {
  /** The user's consent to run harness code (`--trust`, a trusted workspace): script metrics run only with it. */
  trust?: boolean;
  /** The built-in health report of the same scope, when the caller has it (saves recomputing it). */
  health?: HealthReport;
  /** The built-in series of the same scope (for trends), when the caller has it. */
  series?: SeriesPoint[];
  /** Whether to evaluate the rules (default true); false loads them for their problems only (the health report). */
  rules?: boolean;
}

/**
 * Loads and evaluates a harness's user metrics and rules over a scope. Never throws for a
 * broken file: it becomes a problem with the file (and line), and everything else runs.
 * Call it from `health` (extra metrics) and `diagnose` (extra findings) next to the built-ins.
 */
export async function evaluateUserDiagnostics(store: RolloutStore, harnessRoot: string, scope: Scope = {}, opts: UserDiagnosticsOptions = {}): Promise<UserDiagnostics> {
  const um = loadUserMetrics(harnessRoot);
  const known = new Set([...CATALOG.map((d) => d.name), ...um.metrics.map((m) => m.name)]);
  const ur = loadUserRules(harnessRoot, known);
  const computed = await computeUserMetrics(store, um.metrics, scope, opts.trust);
  const out: UserDiagnostics = {
    metrics: computed.results,
    findings: [],
    problems: [...um.problems, ...computed.problems, ...ur.problems],
    loaded: { metrics: um.metrics.map((m) => m.name), rules: ur.rules.map((r) => r.id) },
    notes: [],
  };
  if (!ur.rules.length || opts.rules === false) return out;
  const health = opts.health ?? (await computeHealth(store, scope));
  const now = new Map<string, number | null>([...health.metrics.map((m) => [m.name, m.value] as const), ...computed.results.map((m) => [m.name, m.value] as const)]);
  const wanted = { now: new Set<string>(), trend: new Set<string>() };
  for (const r of ur.rules) metricsOf(r.when, wanted);
  const series = new Map<string, number[]>();
  if (wanted.trend.size) {
    const points = opts.series ?? (await computeSeries(store, scope));
    const userTrend = um.metrics.filter((m) => wanted.trend.has(m.name));
    const userByPoint: Map<string, number | null>[] = [];
    for (const p of points) {
      const r = userTrend.length ? await computeUserMetrics(store, userTrend, p.scope, opts.trust) : { results: [] };
      userByPoint.push(new Map(r.results.map((x) => [x.name, x.value])));
    }
    for (const name of wanted.trend) {
      const xs = points.map((p, i) => (name in p.values ? (p.values[name] ?? null) : (userByPoint[i]!.get(name) ?? null))).filter((v): v is number => v !== null);
      series.set(name, xs);
    }
  }
  const byName = new Map([...CATALOG.map((d) => [d.name, d.dimension] as const), ...um.metrics.map((m) => [m.name, m.dimension] as const)]);
  for (const rule of ur.rules) {
    const v = check(rule.when, now, series);
    if (v.fired === null) {
      out.notes.push(`rule ${rule.id} (${path.basename(rule.file)}:${rule.line}) undecided: ${v.missing.join('; ')}`);
      continue;
    }
    if (!v.fired) continue;
    const firstMetric = [...metricsOf(rule.when, { now: new Set(), trend: new Set() }).now, ...metricsOf(rule.when, { now: new Set(), trend: new Set() }).trend][0];
    out.findings.push({
      id: `user:${rule.id}`,
      rule: rule.id,
      title: rule.title,
      severity: rule.severity,
      dimension: rule.dimension ?? (firstMetric ? (byName.get(firstMetric) ?? 'behavior') : 'behavior'),
      evidence: Object.entries(v.evidence).map(([metric, value]) => ({ metric, scope: {}, value, n: health.rollouts })),
      examples: [],
      suggestion: `${v.details.join('; ')}. Suggested layer: ${rule.layer}. (${path.basename(rule.file)}:${rule.line})`,
    });
  }
  return out;
}

/** `file:line:col: message`, as editors link it. */
export function formatProblem(p: DiagnosticProblem): string {
  return `${p.file}${p.line !== undefined ? `:${p.line}${p.column !== undefined ? `:${p.column}` : ''}` : ''}: ${p.message}`;
}

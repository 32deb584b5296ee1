/**
 * The diagnosis of a scope of rollouts, as every surface shows it (`evotrainer health` and
 * `diagnose`, the editor's Health panel and Findings view, the language server's hovers,
 * the evolve loop, the gate's side-effect check): the catalog's health metrics and the
 * harness's own metric files, judged by the harness manifest's thresholds; the findings of
 * the built-in rules and the harness's rule files; the failure modes of the rollouts; and
 * the harness diagnostics that could not run.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Finding } from '../model';
import { MANIFEST_FILE, parseManifest, type Manifest } from '../harness/manifest';
import type { RolloutStore } from '../store/store';
import { SUGGESTED_LAYER, type FailureMode } from './failureModes';
import { computeHealth, computeSeries, manifestThresholds, scopeWhere, type HealthReport, type Scope, type SeriesPoint } from './health';
import { evaluateRules } from './rules';
import { evaluateUserDiagnostics, formatProblem, type DiagnosticProblem } from './userDiagnostics';

export interface DiagnoseOptions {
  /** The harness folder: its diagnostics/ (metric and rule files) and its evotrainer.yaml's thresholds apply. */
  harness?: string | null;
  /** The manifest whose thresholds apply, when not the harness folder's (the loop and the gate read it at a version's commit). */
  manifest?: Pick<Manifest, 'thresholds' | 'gate'> | null;
  scope?: Scope;
  /** The user's consent to run harness code (`--trust`, a trusted workspace): the harness's script metrics run only with it. */
  trust?: boolean;
  /** 'health': the metrics only (no trends, findings or failure modes); 'all' (default): everything. */
  parts?: 'health' | 'all';
  /** The scope of the trend series, when not `scope` (the loop reads trends over the train split). */
  seriesScope?: Scope;
}

export interface FailureModeCount {
  mode: FailureMode;
  count: number;
  /** Up to five rollout ids. */
  examples: number[];
  /** The intervention layer the mode usually calls for. */
  layer: string;
}

export interface Diagnosis {
  scope: Scope;
  /** Catalog and harness metrics; alerts are those whose threshold fired. */
  health: HealthReport;
  /** Built-in rules, then the harness's rules. Empty for parts 'health'. */
  findings: Finding[];
  /** Most frequent first. Empty for parts 'health'. */
  failureModes: FailureModeCount[];
  /** Harness metric and rule files that could not be read or run (the rest did). */
  problems: DiagnosticProblem[];
  /** Harness rules that could not be decided here (a metric without a value, too few evaluations). */
  notes: string[];
  /** The evaluations the trends ran over (versions or step ranges). Empty for parts 'health'. */
  series: SeriesPoint[];
}

/** The thresholds of a harness folder's evotrainer.yaml (a manifest that does not parse is an error naming it). */
export function harnessManifest(root: string | null | undefined): Manifest | null {
  const file = root ? path.join(root, MANIFEST_FILE) : null;
  if (!file || !existsSync(file)) return null;
  return parseManifest(readFileSync(file, 'utf8'), file);
}

export async function diagnose(store: RolloutStore, opts: DiagnoseOptions = {}): Promise<Diagnosis> {
  const scope = opts.scope ?? {};
  const root = opts.harness ?? null;
  const manifest = opts.manifest !== undefined ? opts.manifest : harnessManifest(root);
  const health = await computeHealth(store, scope, { thresholds: manifestThresholds(manifest) });
  const all = opts.parts !== 'health';
  const series = all ? await computeSeries(store, opts.seriesScope ?? scope) : [];
  const findings = all ? evaluateRules({ health, series }) : [];
  const out: Diagnosis = { scope, health, findings, failureModes: [], problems: [], notes: [], series };
  if (root) {
    const user = await evaluateUserDiagnostics(store, root, scope, { health, ...(all ? { series } : {}), trust: opts.trust === true, rules: all });
    health.metrics.push(...user.metrics);
    health.alerts.push(...user.metrics.filter((m) => m.status === 'warning' || m.status === 'critical'));
    findings.push(...user.findings);
    out.problems = user.problems;
    out.notes = user.notes;
  }
  if (all) out.failureModes = await failureModes(store, scope);
  return out;
}

/** The failure modes of the rollouts in scope, most frequent first, with up to five examples each. */
export async function failureModes(store: RolloutStore, scope: Scope): Promise<FailureModeCount[]> {
  await store.ensureDerivedViews();
  const { sql, params } = scopeWhere(scope);
  const modes = await store.all<{ failure_mode: FailureMode; n: number; examples: number[] }>(
    `select failure_mode, count(*)::integer as n, list(id order by id)[1:5] as examples from rollout_failure_modes ${sql} group by 1 order by n desc, 1`,
    params,
  );
  return modes.map((m) => ({ mode: m.failure_mode, count: Number(m.n), examples: m.examples.map(Number), layer: SUGGESTED_LAYER[m.failure_mode] }));
}

/** The problems and undecided rules of a diagnosis as lines (`file:line:col: message`). */
export function problemLines(d: Pick<Diagnosis, 'problems' | 'notes'>): string[] {
  return [...d.problems.map(formatProblem), ...d.notes];
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { CATALOG, type MetricDefinition } from '../core/diagnose/catalog';
import { loadUserMetrics, type UserMetric } from '../core/diagnose/userDiagnostics';
import { checkManifest, MANIFEST_FILE, type Manifest } from '../core/harness/manifest';
import type { Threshold } from '../core/model';

/** A metric a harness can name: a built-in of the catalog or one of its diagnostics/metrics files. */
export type MetricEntry = { builtin: true; name: string; def: MetricDefinition } | { builtin: false; name: string; user: UserMetric };

/** The catalog and the harness's own metrics (read from disk: what the engine would load). */
export function metricsOf(root: string | null): MetricEntry[] {
  const builtins: MetricEntry[] = CATALOG.map((def) => ({ builtin: true, name: def.name, def }));
  if (!root) return builtins;
  const user: MetricEntry[] = loadUserMetrics(root).metrics.map((u) => ({ builtin: false, name: u.name, user: u }));
  return [...builtins, ...user];
}

export function findMetric(root: string | null, name: string): MetricEntry | undefined {
  return metricsOf(root).find((m) => m.name === name);
}

/** The harness manifest, when it parses (thresholds override the catalog's). */
export function manifestOf(root: string | null): Manifest | null {
  if (!root) return null;
  try {
    return checkManifest(readFileSync(path.join(root, MANIFEST_FILE), 'utf8')).manifest;
  } catch {
    return null;
  }
}

/** The thresholds in force for a metric: the manifest's override, else its own defaults. */
export function thresholdsOf(m: MetricEntry, manifest: Manifest | null): { thresholds: Threshold[]; from: 'manifest' | 'default' } {
  const o = manifest?.thresholds?.[m.name];
  if (o && (o.warning !== undefined || o.critical !== undefined)) {
    const op = o.op ?? '>';
    const thresholds: Threshold[] = [];
    if (o.critical !== undefined) thresholds.push({ severity: 'critical', op, value: o.critical });
    if (o.warning !== undefined) thresholds.push({ severity: 'warning', op, value: o.warning });
    return { thresholds, from: 'manifest' };
  }
  return { thresholds: m.builtin ? m.def.thresholds : m.user.thresholds, from: 'default' };
}

// ---------------------------------------------------------------- the built-ins as a document

/** URI of the read-only document listing the built-in metrics (the client serves it). */
export const BUILTIN_METRICS_URI = 'evotrainer-catalog:/builtin-metrics.yaml';

let builtinDoc: { text: string; lines: Map<string, number> } | undefined;

/**
 * The built-in catalog rendered as YAML, one mapping per metric, with the line of each.
 * Go-to-definition on a built-in lands here: the catalog is data compiled into the engine
 * (its TypeScript source is not shipped), so the document is generated from the very
 * definitions the engine evaluates.
 */
export function builtinMetricsDocument(): { text: string; lines: Map<string, number> } {
  if (builtinDoc) return builtinDoc;
  const out = [
    '# EvoTrainer built-in metrics (read-only; generated from the engine\'s catalog).',
    '# `sql` is an aggregate over `over` (rollouts, groups, reward values or rollout pairs).',
    '# A harness adds metrics under diagnostics/metrics/ and overrides thresholds in evotrainer.yaml.',
    '',
  ];
  const lines = new Map<string, number>();
  for (const d of CATALOG) {
    lines.set(d.name, out.length);
    const body: Record<string, unknown> = { dimension: d.dimension, unit: d.unit, description: d.description, over: d.source, sql: d.sql };
    if (d.thresholds.length) body.thresholds = d.thresholds.map((t) => `${t.severity}: ${t.op} ${t.value}`);
    if (d.domains.length) body.domains = d.domains;
    if (d.higherIsBetter !== undefined) body.higher_is_better = d.higherIsBetter;
    out.push(...stringify({ [d.name]: body }, { lineWidth: 0 }).trimEnd().split('\n'), '');
  }
  builtinDoc = { text: out.join('\n'), lines };
  return builtinDoc;
}

/**
 * Human labels of rollouts and how well the automatic diagnostics agree with them.
 *
 * Labels live in the harness repo as JSONL (`labels/*.jsonl`), one rollout a line:
 *   {"rollout_ref": "trajs/django__django-11276.traj.json#1", "failure_mode": "wrong_answer",
 *    "note": "edits the wrong file", "labeler": "ana", "at": "2025-06-01"}
 * A rollout is named by `rollout_ref` (its raw ref, or a path suffix of it), `rollout_id`
 * (this store's id), or `instance_id` / `prompt_id` (with `sample_index` and `run` when a
 * task has several rollouts). Bad lines are reported with file:line; the rest still load.
 *
 * Scores: precision, recall and F1 of each built-in failure-mode classifier (the
 * `rollout_failure_modes` view, one mode against the rest) and of each judge's labels
 * (cached verdicts of the current rubric files), against the human labels.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBValue } from '@duckdb/node-api';
import { z } from 'zod';
import type { RolloutStore } from '../store/store';
import { scopeWhere, type Scope } from './health';
import { cachedVerdicts, loadRubric, rubricFiles } from './judges';

export interface HumanLabel {
  file: string;
  line: number;
  rolloutRef?: string;
  rolloutId?: number;
  promptId?: string;
  run?: string;
  sampleIndex?: number;
  failureMode: string;
  note?: string;
  labeler?: string;
  at?: string;
}

export interface LabelProblem {
  file: string;
  line?: number;
  message: string;
}

const LabelLine = z
  .object({
    rollout_ref: z.string().min(1).optional(),
    rollout_id: z.number().int().nonnegative().optional(),
    instance_id: z.string().min(1).optional(),
    prompt_id: z.string().min(1).optional(),
    run: z.string().min(1).optional(),
    sample_index: z.number().int().nonnegative().optional(),
    failure_mode: z.string().min(1),
    note: z.string().optional(),
    labeler: z.string().optional(),
    at: z.string().optional(),
  })
  .loose()
  .refine((o) => o.rollout_ref !== undefined || o.rollout_id !== undefined || o.instance_id !== undefined || o.prompt_id !== undefined, {
    message: 'names no rollout: give rollout_ref, rollout_id, instance_id or prompt_id',
  });

/** Labels compare case- and separator-insensitively: "Format error loop" = format_error_loop. */
export function normalizeLabel(s: string): string {
  return s.trim().toLowerCase().replace(/[\s-]+/g, '_');
}

/** Parses one labels file's text; bad lines become problems with file:line. */
export function parseLabels(file: string, text: string): { labels: HumanLabel[]; problems: LabelProblem[] } {
  const labels: HumanLabel[] = [];
  const problems: LabelProblem[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim() || raw.trim().startsWith('//')) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      problems.push({ file, line, message: `not valid JSON (${(err as Error).message})` });
      return;
    }
    const p = LabelLine.safeParse(json);
    if (!p.success) {
      const issue = p.error.issues[0]!;
      problems.push({ file, line, message: `${issue.path.length ? `"${issue.path.join('.')}": ` : ''}${issue.message}` });
      return;
    }
    const o = p.data;
    const pid = o.prompt_id ?? o.instance_id;
    labels.push({
      file,
      line,
      failureMode: normalizeLabel(o.failure_mode),
      ...(o.rollout_ref !== undefined ? { rolloutRef: o.rollout_ref } : {}),
      ...(o.rollout_id !== undefined ? { rolloutId: o.rollout_id } : {}),
      ...(pid !== undefined ? { promptId: pid } : {}),
      ...(o.run !== undefined ? { run: o.run } : {}),
      ...(o.sample_index !== undefined ? { sampleIndex: o.sample_index } : {}),
      ...(o.note !== undefined ? { note: o.note } : {}),
      ...(o.labeler !== undefined ? { labeler: o.labeler } : {}),
      ...(o.at !== undefined ? { at: o.at } : {}),
    });
  });
  return { labels, problems };
}

/** Every `labels/*.jsonl` of a harness, in file-name order. */
export function loadLabels(harnessRoot: string): { files: string[]; labels: HumanLabel[]; problems: LabelProblem[] } {
  const dir = path.join(harnessRoot, 'labels');
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
  } catch {
    return { files: [], labels: [], problems: [] };
  }
  const out = { files: [] as string[], labels: [] as HumanLabel[], problems: [] as LabelProblem[] };
  for (const n of names) {
    const file = path.join(dir, n);
    out.files.push(file);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      out.problems.push({ file, message: `cannot read (${(err as Error).message})` });
      continue;
    }
    const r = parseLabels(file, text);
    out.labels.push(...r.labels);
    out.problems.push(...r.problems);
  }
  return out;
}

/**
 * Resolves labels to rollout ids of the store (within a scope). A label that matches no
 * rollout, or several, is a problem; when two labels name one rollout the later wins.
 */
export async function resolveLabels(store: RolloutStore, labels: HumanLabel[], scope: Scope = {}): Promise<{ byRollout: Map<number, HumanLabel>; problems: LabelProblem[] }> {
  const problems: LabelProblem[] = [];
  const byRollout = new Map<number, HumanLabel>();
  if (!labels.length) return { byRollout, problems };
  // The labels as a temporary table, joined to the rollouts in one query.
  const keyParams: DuckDBValue[] = [];
  labels.forEach((l, k) => keyParams.push(k, l.rolloutRef ?? null, l.rolloutId ?? null, l.promptId ?? null, l.run ?? null, l.sampleIndex ?? null));
  const keys = { name: 'label_keys', select: `select * from (values ${labels.map(() => '(?::integer, ?::varchar, ?::bigint, ?::varchar, ?::varchar, ?::integer)').join(', ')}) t(k, ref, rid, pid, run, sidx)`, params: keyParams };
  await store.withTempTables([keys], async () => {
    const { sql, params } = scopeWhere(scope);
    // A reference names a file's record with or without `.gz` (a dump compressed after it was labelled, or before).
    const matches = await store.all<{ k: number; id: number }>(
      `select l.k, r.id from (select *, regexp_replace(ref, '\\.gz([#:][0-9]+)?$', '\\1') as ref0 from label_keys) l
       join (select *, case when contains(raw_ref, '.gz') then regexp_replace(raw_ref, '\\.gz([#:][0-9]+)$', '\\1') else raw_ref end as ref0 from rollouts) r on (
         (l.rid is not null and r.id = l.rid)
         or (l.ref is not null and (r.ref0 = l.ref0 or suffix(r.ref0, '/' || l.ref0)
             or regexp_replace(r.ref0, '#[0-9]+$', '') = l.ref0 or suffix(regexp_replace(r.ref0, '#[0-9]+$', ''), '/' || l.ref0)))
         or (l.rid is null and l.ref is null and r.prompt_id = l.pid and (l.sidx is null or r.sample_index = l.sidx)))
         and (l.run is null or r.run_id = l.run)
       ${sql}
       order by l.k, r.id`,
      params,
    );
    const ids = new Map<number, number[]>();
    for (const m of matches) {
      const k = Number(m.k);
      let xs = ids.get(k);
      if (!xs) ids.set(k, (xs = []));
      xs.push(Number(m.id));
    }
    labels.forEach((l, k) => {
      const xs = ids.get(k) ?? [];
      const what = l.rolloutRef ?? (l.rolloutId !== undefined ? `rollout ${l.rolloutId}` : `task ${l.promptId}`);
      if (!xs.length) {
        problems.push({ file: l.file, line: l.line, message: `${what} matches no rollout${Object.keys(scope).length ? ' in scope' : ''}` });
        return;
      }
      if (xs.length > 1) {
        problems.push({ file: l.file, line: l.line, message: `${what} matches ${xs.length} rollouts (${xs.slice(0, 5).join(', ')}${xs.length > 5 ? ', …' : ''}); add "run" or "sample_index", or use rollout_ref` });
        return;
      }
      const id = xs[0]!;
      const prev = byRollout.get(id);
      if (prev && prev.failureMode !== l.failureMode) {
        problems.push({ file: l.file, line: l.line, message: `rollout ${id} was labelled "${prev.failureMode}" at ${path.basename(prev.file)}:${prev.line}; the later label "${l.failureMode}" is used` });
      }
      byRollout.set(id, l);
    });
  });
  return { byRollout, problems };
}

export interface ClassScore {
  label: string;
  /** Human labels of this class among the compared rollouts. */
  support: number;
  /** Rollouts the classifier put in this class, among the compared ones. */
  predicted: number;
  tp: number;
  fp: number;
  fn: number;
  /** null when undefined (nothing predicted / nothing to find). */
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

export interface ClassifierScore {
  /** `failure_modes` (built-in) or `judge:<rubric name>`. */
  classifier: string;
  model?: string;
  /** Rollouts with both a human label and a prediction. */
  n: number;
  accuracy: number | null;
  /** Mean F1 over the classes seen (in the labels or the predictions). */
  macroF1: number | null;
  classes: ClassScore[];
}

/** One-vs-rest precision, recall and F1 of each class, over rollouts with both a prediction and a gold label. */
export function scoreClassifier(classifier: string, predicted: Map<number, string>, gold: Map<number, string>): ClassifierScore {
  const both = [...gold.keys()].filter((id) => predicted.has(id));
  const classes = new Set<string>();
  for (const id of both) {
    classes.add(gold.get(id)!);
    classes.add(predicted.get(id)!);
  }
  const div = (a: number, b: number) => (b === 0 ? null : a / b);
  const scores: ClassScore[] = [...classes].sort().map((label) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const id of both) {
      const g = gold.get(id) === label;
      const p = predicted.get(id) === label;
      if (g && p) tp++;
      else if (p) fp++;
      else if (g) fn++;
    }
    const precision = div(tp, tp + fp);
    const recall = div(tp, tp + fn);
    // No hit among what it predicted or should have found: F1 0 (precision may still be undefined).
    const f1 = tp === 0 ? (tp + fp + fn === 0 ? null : 0) : (2 * precision! * recall!) / (precision! + recall!);
    return { label, support: tp + fn, predicted: tp + fp, tp, fp, fn, precision, recall, f1 };
  });
  const f1s = scores.map((s) => s.f1).filter((x): x is number => x !== null);
  return {
    classifier,
    n: both.length,
    accuracy: div(both.filter((id) => gold.get(id) === predicted.get(id)).length, both.length),
    macroF1: f1s.length ? f1s.reduce((a, b) => a + b, 0) / f1s.length : null,
    classes: scores,
  };
}

export interface LabelScoreReport {
  files: string[];
  labels: number;
  /** Labels resolved to one rollout each (after the later-wins rule). */
  labelledRollouts: number;
  problems: LabelProblem[];
  classifiers: ClassifierScore[];
}

/** Scores the built-in failure-mode classifier and every judge of the harness against its human labels. */
export async function scoreLabels(store: RolloutStore, harnessRoot: string, scope: Scope = {}): Promise<LabelScoreReport> {
  const loaded = loadLabels(harnessRoot);
  const { byRollout, problems } = await resolveLabels(store, loaded.labels, scope);
  const gold = new Map([...byRollout].map(([id, l]) => [id, l.failureMode]));
  const report: LabelScoreReport = { files: loaded.files, labels: loaded.labels.length, labelledRollouts: gold.size, problems: [...loaded.problems, ...problems], classifiers: [] };
  await store.ensureDerivedViews();
  const ids = [...gold.keys()];
  const modes = new Map<number, string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    for (const r of await store.all<{ id: number; failure_mode: string }>(`select id, failure_mode from rollout_failure_modes where id in (${chunk.map(() => '?').join(', ')})`, chunk)) modes.set(Number(r.id), r.failure_mode);
  }
  report.classifiers.push(scoreClassifier('failure_modes', modes, gold));
  for (const file of rubricFiles(harnessRoot)) {
    let rubric;
    try {
      rubric = loadRubric(file);
    } catch (err) {
      report.problems.push({ file, message: (err as Error).message });
      continue;
    }
    const verdicts = await cachedVerdicts(store, rubric.sha256);
    const models = [...new Set(verdicts.map((v) => v.model))].sort();
    for (const model of models) {
      const pred = new Map(verdicts.filter((v) => v.model === model).map((v) => [Number(v.rollout_id), normalizeLabel(v.label)]));
      report.classifiers.push({ ...scoreClassifier(`judge:${rubric.name}`, pred, gold), model });
    }
  }
  return report;
}

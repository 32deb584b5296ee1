/**
 * SWE-bench verdicts for one instance, wherever a SWE run keeps them:
 *
 * - a per-instance `report.json` of swebench.harness (`get_eval_report` in
 *   swebench/harness/grading.py: `{<instance_id>: {resolved, patch_successfully_applied,
 *   tests_status}}`) as `<dir>/<id>.report.json`, `<dir>/<id>/report.json`, `<dir>/report.json`
 *   or `<dir>/../reports/<id>.report.json`;
 * - a run summary listing instance ids by outcome: the harness's `<model>.<run_id>.json`
 *   (`make_run_report` in swebench/harness/reporting.py: `resolved_ids`, `unresolved_ids`,
 *   `empty_patch_ids`, `error_ids`, `incomplete_ids`, …), sb-cli's
 *   `sb-cli-reports/<subset>__<split>__<run_id>.json` (the same lists), SWE-agent's
 *   `results.json`; found in the trajectory's folder, the dump folder above it, or given
 *   explicitly (`evotrainer import --verdicts FILE`).
 *
 * An instance no list names has no verdict (unknown, not failed); one in `error_ids` was
 * not evaluated (errored, not failed); an empty patch is not resolved.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { documentTooLarge, maxDocumentBytes } from './documentSize';
import path from 'node:path';
import { isRecord } from './util';

export type VerdictStatus = 'resolved' | 'unresolved' | 'empty_patch' | 'error';

export interface Verdict {
  /** The file it came from. */
  file: string;
  status: VerdictStatus;
  /** true / false when evaluated; null when the evaluation errored. */
  resolved: boolean | null;
  applied: boolean | null;
  /** FAIL_TO_PASS / PASS_TO_PASS counts, from a per-instance report. */
  tests: Record<string, number> | null;
}

/** Run-summary lists by outcome, first match wins (an id in both error and unresolved is an error). */
const LISTS: [string, VerdictStatus][] = [
  ['resolved_ids', 'resolved'],
  ['error_ids', 'error'],
  ['empty_patch_ids', 'empty_patch'],
  ['unresolved_ids', 'unresolved'],
];

/** Whether a parsed JSON document is a run summary (lists instance ids by outcome). */
export function isRunSummary(doc: unknown): doc is Record<string, unknown> {
  return isRecord(doc) && LISTS.some(([key]) => Array.isArray(doc[key]));
}

function fromSummary(file: string, doc: Record<string, unknown>, instanceId: string): Verdict | null {
  for (const [key, status] of LISTS) {
    const ids = doc[key];
    if (Array.isArray(ids) && ids.includes(instanceId)) {
      return { file, status, resolved: status === 'resolved' ? true : status === 'error' ? null : false, applied: null, tests: null };
    }
  }
  return null;
}

function fromInstanceReport(file: string, doc: unknown, instanceId: string): Verdict | null {
  if (!isRecord(doc)) return null;
  const own = isRecord(doc[instanceId]) ? doc[instanceId] : doc;
  if (typeof own.resolved !== 'boolean') return null;
  const tests: Record<string, number> = {};
  const ts = own.tests_status;
  if (isRecord(ts)) {
    for (const [kind, key] of [['FAIL_TO_PASS', 'f2p'], ['PASS_TO_PASS', 'p2p']] as const) {
      const t = ts[kind];
      if (isRecord(t)) {
        tests[`${key}_success`] = Array.isArray(t.success) ? t.success.length : 0;
        tests[`${key}_failure`] = Array.isArray(t.failure) ? t.failure.length : 0;
      }
    }
  }
  return {
    file,
    status: own.resolved ? 'resolved' : 'unresolved',
    resolved: own.resolved,
    applied: typeof own.patch_successfully_applied === 'boolean' ? own.patch_successfully_applied : null,
    tests: Object.keys(tests).length ? tests : null,
  };
}

/**
 * Parsed JSON documents by path, valid while the file's size and mtime (in ns) stay the
 * same: a dump folder's summaries are read once, not once per trajectory.
 */
const parsed = new Map<string, { size: bigint; mtimeNs: bigint; doc: unknown }>();

function readJson(file: string): unknown {
  const st = statSync(file, { bigint: true });
  const hit = parsed.get(file);
  if (hit && hit.size === st.size && hit.mtimeNs === st.mtimeNs) return hit.doc;
  const tooLarge = documentTooLarge(file, Number(st.size), maxDocumentBytes());
  if (tooLarge) throw new Error(tooLarge.message);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
  }
  parsed.set(file, { size: st.size, mtimeNs: st.mtimeNs, doc });
  return doc;
}

function exists(file: string): boolean {
  // Most candidates are missing: no exception for those (a trajectory asks for four).
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false; // e.g. a path through a file
  }
}

/** Run summaries are small; a dump folder's large JSON files are something else. */
const SUMMARY_MAX_BYTES = 32 * 1024 * 1024;

/** A folder's names, by name order, kept while the folder is unchanged (every trajectory of a folder asks). */
const listed = new Map<string, { mtimeNs: bigint; names: string[] }>();

function namesIn(dir: string): string[] | null {
  let mtimeNs: bigint;
  try {
    mtimeNs = statSync(dir, { bigint: true }).mtimeNs;
  } catch {
    return null;
  }
  const hit = listed.get(dir);
  if (hit && hit.mtimeNs === mtimeNs) return hit.names;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return null;
  }
  if (listed.size > 256) listed.clear();
  listed.set(dir, { mtimeNs, names });
  return names;
}

/** The run summaries directly in `dir` (and its `sb-cli-reports/`), by name order. */
function summariesIn(dir: string): string[] {
  const out: string[] = [];
  for (const d of [dir, path.join(dir, 'sb-cli-reports')]) {
    const names = namesIn(d);
    if (!names) continue;
    for (const name of names) {
      if (!name.endsWith('.json') || name.endsWith('.traj.json') || name.endsWith('.report.json') || name === 'report.json') continue;
      const file = path.join(d, name);
      let st;
      try {
        st = statSync(file);
      } catch {
        continue;
      }
      if (!st.isFile() || st.size > SUMMARY_MAX_BYTES) continue;
      // A JSON file that is not a run summary (preds.json, a config) is not an error here.
      let doc: unknown;
      try {
        doc = readJson(file);
      } catch {
        continue;
      }
      if (isRunSummary(doc)) out.push(file);
    }
  }
  return out;
}

/**
 * The verdict of `instanceId` for the trajectory `trajFile`: from `explicit` (a run summary
 * or report the user named) when given, else a per-instance report beside the trajectory,
 * else a run summary in its folder or the folder above. Null when none names the instance.
 * Throws when a report that should hold it cannot be read.
 */
export function findVerdict(trajFile: string, instanceId: string, explicit?: string): Verdict | null {
  if (explicit) {
    const doc = readJson(explicit);
    if (isRunSummary(doc)) return fromSummary(explicit, doc, instanceId);
    if (!isRecord(doc)) throw new Error(`${explicit}: not a SWE-bench run summary (resolved_ids, unresolved_ids, error_ids…) or report.json`);
    return fromInstanceReport(explicit, doc, instanceId);
  }
  const dir = path.dirname(trajFile);
  const parent = path.dirname(dir);
  const reports = [
    path.join(dir, `${instanceId}.report.json`),
    path.join(dir, instanceId, 'report.json'),
    path.join(dir, 'report.json'),
    path.join(parent, 'reports', `${instanceId}.report.json`),
  ];
  for (const file of reports) {
    if (!exists(file)) continue;
    const doc = readJson(file);
    const v = isRunSummary(doc) ? fromSummary(file, doc, instanceId) : fromInstanceReport(file, doc, instanceId);
    if (v) return v;
  }
  for (const d of dir === parent ? [dir] : [dir, parent]) {
    for (const file of summariesIn(d)) {
      const v = fromSummary(file, readJson(file) as Record<string, unknown>, instanceId);
      if (v) return v;
    }
  }
  return null;
}

/** The record fields a verdict sets: reward and correctness when evaluated, an error when it errored. */
export function verdictFields(v: Verdict | null): { reward: number | null; correct: boolean | null; rewardComponents: Record<string, number>; errors: string[] } {
  if (!v || v.resolved === null) return { reward: null, correct: null, rewardComponents: {}, errors: v ? [`SWE-bench evaluation errored (listed in error_ids of ${v.file})`] : [] };
  return { reward: v.resolved ? 1 : 0, correct: v.resolved, rewardComponents: { resolved: v.resolved ? 1 : 0 }, errors: [] };
}

/** Whether a submission is a non-empty patch (a unified diff): submitting one means the agent edited. */
export function isPatch(submission: unknown): boolean {
  return typeof submission === 'string' && /^(diff --git |--- \S|@@ -\d)/m.test(submission);
}

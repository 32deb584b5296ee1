import type { DuckDBValue } from '@duckdb/node-api';
import { CATALOG, LEAK_METRICS, metricByName, type MetricDefinition } from '../diagnose/catalog';
import { computeHealth, criticalThreshold, formatLeak, GROUP_COLUMNS, manifestThresholds, type HealthReport, type LeakExample } from '../diagnose/health';
import { checkBoundary } from '../harness/boundary';
import { analyzeChanges } from '../harness/changes';
import { readLedger, requireEntry, updateLedger, type LedgerEntry } from '../harness/ledger';
import { gitOut } from '../harness/git';
import type { Manifest } from '../harness/manifest';
import { HarnessError, manifestAt, nowIso, type Harness } from '../harness/repo';
import { parseCriterion } from '../harness/versions';
import type { GateDecision } from '../model';
import type { RolloutStore } from '../store/store';
import { auditGain, type GainAuditOptions } from './gainAudit';
import { analyzeFlips, flipsLeak, formatFlipBehaviour, formatFlipLeaks, type FlipAnalysis } from './flips';
import { comparePaired, formatComparison, type PairedComparison } from './stats';
import { seedOf } from '../util/random';

/**
 * The promotion gate (METHOD.md, "Promotion — and preventing false prosperity"):
 * PROMOTE only when the primary metric does not regress (judged on its interval, not its
 * mean), the targeted metric meets the version's success criterion, no other health
 * dimension newly alerts, and every validity check passes — leak, R4 (shaped reward up
 * while correctness is flat), eval-set pin, frozen paths, declared bug classes. A validity
 * failure rejects however high the score; an effect within noise goes to a person.
 */

export type GateCategory = 'validity' | 'primary' | 'target' | 'side_effect' | 'backtest' | 'evidence';

export interface GateCheck {
  check: string;
  category: GateCategory;
  /** null: the data cannot decide (within noise, missing) — a person must. */
  passed: boolean | null;
  detail: string;
}

export interface GateReport {
  schema: 1;
  version: string;
  baseline: string | null;
  decision: 'promote' | 'reject' | 'needs_human';
  checks: GateCheck[];
  comparisons: Record<string, PairedComparison>;
  evalRollouts: { version: number; baseline: number; split: string | null };
  /** The flipped tasks and what their trajectories did that the baseline's did not (null: no flips or no baseline). */
  flips?: FlipAnalysis | null;
  /** Eval trajectories shown their answer before writing it: where (rollout, turn, channel). */
  leaks?: LeakExample[];
  decidedAt: string;
}

/** Rows whose data_source ends with this are the same eval with the environment's shortcuts closed. */
export const HONEST_SUFFIX = '-honest';

const DEFAULT_BUG_PATTERNS = [
  {
    pattern: String.raw`\b(advantages?|adv)\b\s*(\[[^\]]*\])?\s*([-+*/]=|=\s*\1\s*[-+*/])`,
    message: 'a penalty or bonus written into the advantages (it bypasses the reward and its diagnostics: METHOD.md rejects it as a bug)',
    paths: undefined as string[] | undefined,
  },
];

interface EvalScope {
  version: string;
  split: string | null;
  honest: boolean;
}

function evalWhere(s: EvalScope): { sql: string; params: DuckDBValue[] } {
  const where = ['version = ?'];
  const params: DuckDBValue[] = [s.version];
  if (s.split) {
    where.push('split = ?');
    params.push(s.split);
  }
  where.push(s.honest ? `coalesce(data_source, '') like '%${HONEST_SUFFIX}'` : `coalesce(data_source, '') not like '%${HONEST_SUFFIX}'`);
  return { sql: `where ${where.join(' and ')}`, params };
}

/** A catalog metric per task (prompt), for paired intervals; null when it has no per-rollout form. */
async function perTask(store: RolloutStore, def: MetricDefinition, s: EvalScope): Promise<Map<string, number> | null> {
  return (await perTaskMany(store, [def], s))[0]!;
}

/** Several catalog metrics per task in one pass over the features (one scan per source). */
async function perTaskMany(store: RolloutStore, defs: MetricDefinition[], s: EvalScope): Promise<(Map<string, number> | null)[]> {
  const { sql, params } = evalWhere(s);
  const out: (Map<string, number> | null)[] = defs.map(() => null);
  const read = async (idx: number[], from: (cols: string) => string) => {
    if (!idx.length) return;
    const rows = await store.all<Record<string, unknown>>(from(idx.map((i) => `(${defs[i]!.sql})::double as m${i}`).join(', ')), params);
    for (const i of idx) {
      const m = new Map<string, number>();
      for (const r of rows) {
        const v = r[`m${i}`];
        if (typeof v === 'number' && Number.isFinite(v)) m.set(r.t as string, v);
      }
      out[i] = m;
    }
  };
  const of = (src: string) => defs.flatMap((d, i) => (d.source === src && (src !== 'rollouts' || d.sql !== 'null') ? [i] : []));
  await read(of('rollouts'), (cols) => `select prompt_id as t, ${cols} from rollout_features ${sql} group by prompt_id`);
  await read(
    of('groups'),
    (cols) => `select t, ${cols} from (select prompt_id as t, run_id, group_id, ${GROUP_COLUMNS}
           from rollout_features ${sql} group by all) group by t`,
  );
  return out;
}

async function countEval(store: RolloutStore, s: EvalScope): Promise<number> {
  const { sql, params } = evalWhere(s);
  return (await store.one<{ n: number }>(`select count(*)::int as n from rollout_features ${sql}`, params))?.n ?? 0;
}

const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
const fmt = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));

function compare(a: number, op: string, b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : op === '>=' ? a >= b : a === b;
}

export interface GateOptions {
  version: string;
  /** Compared against (default: the promoted version, else the parent). */
  against?: string;
  /** An LLM judge reads a sample of the flipped trajectories (when an endpoint is configured). */
  audit?: GainAuditOptions;
}

export async function runGate(h: Harness, store: RolloutStore, o: GateOptions): Promise<GateReport> {
  const ledger = await readLedger(h);
  const entry = requireEntry(ledger, o.version);
  const baselineId = o.against ?? (ledger.promoted && ledger.promoted.version !== entry.id ? ledger.promoted.version : entry.parent);
  const baseline: LedgerEntry | null = baselineId ? requireEntry(ledger, baselineId) : null;
  const manifest: Manifest = await manifestAt(h, entry.commit);
  const judgeManifest: Manifest = baseline ? await manifestAt(h, baseline.commit) : manifest;
  const g = judgeManifest.gate ?? {};
  // Seeded from the version pair: the same gate run twice gives the same intervals and decision.
  const statOpts = { reps: g.bootstrap_reps, confidence: g.confidence, seed: seedOf(`${baselineId ?? ''}→${entry.id}`) };
  const checks: GateCheck[] = [];
  let flipAnalysis: FlipAnalysis | null = null;
  let leakExamples: LeakExample[] = [];
  const comparisons: Record<string, PairedComparison> = {};
  await store.ensureDerivedViews();

  // Eval rollouts: the validation split when the version has one.
  const hasVal = (await store.one<{ n: number }>(`select count(*)::int as n from rollouts where version = ? and split = 'val'`, [entry.id]))?.n ?? 0;
  const split = hasVal ? 'val' : null;
  const sv: EvalScope = { version: entry.id, split, honest: false };
  const sb: EvalScope | null = baseline ? { version: baseline.id, split, honest: false } : null;
  const nv = await countEval(store, sv);
  const nb = sb ? await countEval(store, sb) : 0;
  if (!nv) checks.push({ check: 'evaluation rollouts', category: 'evidence', passed: null, detail: `no rollouts of ${entry.id} in the store; import its eval run (\`evotrainer import DIR --version ${entry.id}\`)` });

  // ---- validity: the action boundary, the eval-set pin and declared bug classes, from git.
  const parentEntry = entry.parent ? ledger.entries.get(entry.parent) : undefined;
  if (parentEntry) {
    const parentManifest = await manifestAt(h, parentEntry.commit);
    const changes = await analyzeChanges(h, entry.base, entry.commit, parentManifest.eval_set?.path ?? null);
    const violations = checkBoundary(parentManifest, changes);
    const frozen = violations.filter((v) => v.rule.startsWith('action_boundary.frozen') || v.rule.includes('is frozen'));
    const evalPin = violations.filter((v) => v.rule.startsWith('eval_set'));
    checks.push({ check: 'frozen paths untouched', category: 'validity', passed: frozen.length === 0, detail: frozen.length ? frozen.map((v) => `${v.path} (${v.rule})`).join('; ') : `${changes.files.length} changed file(s), none frozen` });
    checks.push({ check: 'eval-set pin unchanged', category: 'validity', passed: evalPin.length === 0, detail: evalPin.length ? evalPin.map((v) => v.detail).join('; ') : parentManifest.eval_set ? `${parentManifest.eval_set.path} ${parentManifest.eval_set.hash ?? '(no pin)'}` : 'no eval set declared' });
    const diff = await gitOut(h.root, ['diff', '--unified=0', '--no-color', entry.base, entry.commit]);
    const patterns = [...DEFAULT_BUG_PATTERNS, ...(g.bug_patterns ?? [])];
    const hits: string[] = [];
    let file = '';
    for (const line of diff.split('\n')) {
      if (line.startsWith('+++ ')) file = line.slice(6);
      else if (line.startsWith('+') && !line.startsWith('+++')) {
        for (const p of patterns) {
          if (p.paths && !p.paths.some((x) => file === x || (x.endsWith('/') && file.startsWith(x)))) continue;
          let re: RegExp;
          try {
            re = new RegExp(p.pattern);
          } catch {
            continue;
          }
          if (re.test(line.slice(1))) hits.push(`${file}: "${line.slice(1).trim().slice(0, 100)}" — ${p.message}`);
        }
      }
    }
    checks.push({ check: 'declared bug classes', category: 'validity', passed: hits.length === 0, detail: hits.length ? hits.slice(0, 5).join('; ') : `${patterns.length} pattern(s), no match in the diff` });
  }

  // ---- validity: the information leak, one check per cause. Answer seen before written
  // (whatever the channel) always; git history, or the harness's own leak metric, as named.
  // Critical thresholds are health's (with the manifest's overrides): both call the same value a leak.
  const thresholds = manifestThresholds(judgeManifest);
  const leakName = g.leak?.metric ?? 'git_history_share';
  const healthScope = (v: string) => ({ version: v, ...(split ? { split: 'val' as const } : {}) });
  const leakDefs = [...new Set(['answer_in_context_share', leakName])].map((n) => metricByName(n)).filter((d): d is MetricDefinition => d !== undefined);
  const leakV = nv ? await perTaskMany(store, leakDefs, sv) : [];
  const leakB = nv && sb && nb ? await perTaskMany(store, leakDefs, sb) : [];
  const leakHealth = nv ? await computeHealth(store, healthScope(entry.id), { metrics: leakDefs, thresholds }) : null;
  for (const [i, def] of leakDefs.entries()) {
    if (!leakHealth) break;
    const name = def.name;
    const lv = leakV[i] ?? null;
    const lb = leakB[i] ?? null;
    const m = leakHealth.metrics[i];
    const value = m?.value ?? null;
    const max = criticalThreshold(def, thresholds)?.value ?? 0;
    if (value === null) {
      checks.push({ check: `leak (${name})`, category: 'validity', passed: true, detail: `${name} not measurable in these rollouts (no multi-turn steps${name === 'answer_in_context_share' ? ' with outputs and a credited answer' : ''})` });
      continue;
    }
    const cmp = lb && lv ? comparePaired(lb, lv, statOpts) : null;
    if (cmp) comparisons[name] = cmp;
    const leaking = m?.status === 'critical' && (!cmp || cmp.direction !== 'down');
    const vs = cmp ? `; vs ${baseline!.id} ${formatComparison(cmp)}` : '';
    if (name === 'answer_in_context_share') leakExamples = m?.leaks ?? [];
    const where = (m?.leaks ?? []).map(formatLeak).join('; ');
    const what =
      name === 'answer_in_context_share'
        ? `information leak: ${pct(value)} of ${entry.id}'s eval trajectories were shown their answer before writing it (> ${pct(max)})${vs}; where: ${where} — close that channel in the environment before trusting the score`
        : name === 'git_history_share'
          ? `information leak: ${pct(value)} of ${entry.id}'s eval trajectories read the answer from git history (git log/show…) > ${pct(max, 0)}${vs}; e.g. rollouts ${(m?.leaks ?? []).map((l) => l.rollout).join(', ')} — close it in the environment (scrub git history) before trusting the score`
          : `information leak: ${name} ${fmt(value)} > ${max}${vs}`;
    checks.push({ check: `leak (${name})`, category: 'validity', passed: !leaking, detail: leaking ? what : `${name} ${fmt(value)} ≤ ${max}${where ? ` (below the threshold: ${where})` : ''}` });
  }

  const pass = metricByName('pass_rate')!;
  const reward = metricByName('reward_mean')!;
  const primaryName = entry.primaryMetric ?? manifest.primary_metric ?? 'pass_rate';
  const primaryDef = metricByName(primaryName) ?? null;

  if (nv && sb && nb) {
    // ---- validity: R4, the shaped reward rising while correctness is flat or falling.
    const [rv, cv] = await perTaskMany(store, [reward, pass], sv);
    const [rb, cb] = await perTaskMany(store, [reward, pass], sb);
    if (rv && rb && cv && cb && rv.size && cv.size) {
      const rc = comparePaired(rb, rv, statOpts);
      const cc = comparePaired(cb, cv, statOpts);
      comparisons.reward_mean = rc;
      comparisons.pass_rate = cc;
      const hacking = rc.direction === 'up' && cc.direction !== 'up';
      checks.push({ check: 'R4 reward hacking', category: 'validity', passed: !hacking, detail: hacking ? `shaped reward rose ${formatComparison(rc)} while correctness did not: ${formatComparison(cc)}` : `reward ${formatComparison(rc)}; correctness ${formatComparison(cc)}` });
    }
    // ---- honest eval: the same tasks with the environment's shortcuts closed.
    const hv = await countEval(store, { ...sv, honest: true });
    const hb = await countEval(store, { ...sb, honest: true });
    if (hv && hb) {
      const a = await perTask(store, pass, { ...sb, honest: true });
      const b = await perTask(store, pass, { ...sv, honest: true });
      const c = comparePaired(a!, b!, statOpts);
      comparisons.honest_pass_rate = c;
      const margin = g.non_regression_margin ?? 0;
      const regressed = c.ci[1] < -margin && c.direction === 'down';
      checks.push({ check: 'honest score non-regression', category: 'validity', passed: !regressed, detail: `pass rate with the environment's shortcuts closed: ${formatComparison(c)}${regressed ? ' — the raw score gain is not real' : ''}` });
    }
    // ---- primary metric: non-regression judged on its interval.
    if (primaryDef) {
      const pv = await perTask(store, primaryDef, sv);
      const pb = await perTask(store, primaryDef, sb);
      if (pv && pb) {
        const c = comparePaired(pb, pv, statOpts);
        comparisons[primaryName] = c;
        const margin = g.non_regression_margin ?? 0;
        const higherBetter = primaryDef.higherIsBetter !== false;
        const worse = higherBetter ? c.ci[1] < -margin && c.direction === 'down' : c.ci[0] > margin && c.direction === 'up';
        checks.push({ check: `primary ${primaryName} non-regression`, category: 'primary', passed: !worse, detail: `${entry.id} vs ${baseline!.id}: ${formatComparison(c)}${worse ? ' — a regression beyond noise' : c.direction === 'none' ? ' (no change beyond noise)' : ''}` });
      }
      // ---- where the gain came from: the flipped tasks' behaviour against the baseline's.
      const flipped = new Set([...(cv ?? new Map<string, number>())].filter(([t, v]) => v > (cb?.get(t) ?? Infinity)).map(([t]) => t));
      if (flipped.size) {
        const fa = await analyzeFlips(store, { version: sv.version, ...evalWhere(sv) }, { version: sb.version, ...evalWhere(sb) }, flipped);
        flipAnalysis = fa;
        const leak = flipsLeak(fa);
        const parts = [...(fa.answerInContextCount ? [formatFlipLeaks(fa)] : []), ...fa.concentrated.slice(0, 5).map((b) => formatFlipBehaviour(fa, b))];
        checks.push({
          check: 'where the gain came from',
          category: 'validity',
          passed: leak ? false : fa.concentrated.length ? null : true,
          detail: leak
            ? `the gain was shown, not found: ${parts.join('; ')}`
            : fa.concentrated.length
              ? `behaviour concentrated in the ${fa.flipped} flipped task(s) and absent from ${baseline!.id}: ${parts.join('; ')} — a person must judge whether the gain came from outside the task`
              : `${fa.flipped} task(s) flipped fail→pass; no behaviour concentrated in them that ${baseline!.id} lacks${fa.answerInContextCount ? `; ${formatFlipLeaks(fa)}` : ''}`,
        });
      }
      if (o.audit && flipAnalysis?.ids.length) checks.push((await auditGain(store, flipAnalysis.ids, o.audit)).check);
      // ---- nothing changed, yet it moved: an empty diff cannot explain a move beyond the interval.
      const moved = [...new Set([primaryName, 'pass_rate'])].flatMap((k) => (comparisons[k] && comparisons[k].direction !== 'none' ? [[k, comparisons[k]] as const] : []));
      if (parentEntry && moved.length && !(await gitOut(h.root, ['diff', '--name-only', entry.base, entry.commit])).trim()) {
        checks.push({
          check: 'nothing changed, yet it moved',
          category: 'validity',
          passed: null,
          detail: `${entry.id}'s diff against ${entry.base.slice(0, 10)} is empty, yet ${moved.map(([k, c]) => `${k} ${formatComparison(c)}`).join('; ')} — the evaluation, not the harness, changed (data, seed, environment): a person must judge`,
        });
      }
    } else if (entry.metrics[primaryName] !== undefined && baseline && baseline.metrics[primaryName] !== undefined) {
      const v = entry.metrics[primaryName]!;
      const b = baseline.metrics[primaryName]!;
      checks.push({ check: `primary ${primaryName} non-regression`, category: 'primary', passed: v >= b ? true : null, detail: `${fmt(b)} → ${fmt(v)} (recorded values; no per-task data for an interval)` });
    }
  } else if (!baseline) checks.push({ check: 'baseline', category: 'evidence', passed: true, detail: 'root version: nothing to compare against' });
  else if (nv) checks.push({ check: `primary ${primaryName} non-regression`, category: 'evidence', passed: null, detail: `no eval rollouts of the baseline ${baseline.id} in the store: import them to compare` });

  // ---- target: the version's success criterion, judged on its interval.
  const crit = entry.hypothesis ? parseCriterion(entry.hypothesis.successCriterion) : null;
  if (entry.hypothesis && !crit) checks.push({ check: 'success criterion', category: 'target', passed: null, detail: `"${entry.hypothesis.successCriterion}" is not machine-checkable (METRIC OP NUMBER): a person must judge it` });
  const deltaOf = crit && /_delta$/.test(crit.metric) ? metricByName(crit.metric.replace(/_delta$/, '')) : undefined;
  if (crit && nv && deltaOf) {
    // `METRIC_delta OP N`: the paired change against the baseline, judged on its interval.
    const a = sb && nb ? await perTask(store, deltaOf, sb) : null;
    const b = await perTask(store, deltaOf, sv);
    if (!a || !b) checks.push({ check: 'success criterion', category: 'target', passed: null, detail: `${crit.metric}: no baseline eval rollouts to compare against` });
    else {
      const c = comparePaired(a, b, statOpts);
      comparisons[crit.metric] = c;
      const all = compare(c.ci[0], crit.op, crit.value) && compare(c.ci[1], crit.op, crit.value);
      const none = !compare(c.ci[0], crit.op, crit.value) && !compare(c.ci[1], crit.op, crit.value);
      checks.push({ check: 'success criterion', category: 'target', passed: all ? true : none ? false : null, detail: `${crit.metric} vs ${baseline!.id}: ${formatComparison(c)}, needs ${crit.op} ${crit.value}${all || none ? '' : ' — within noise: a person must judge'}` });
    }
  } else if (crit && nv) {
    const def = metricByName(crit.metric);
    const values = def ? await perTask(store, def, sv) : null;
    const health = def ? await computeHealth(store, { version: entry.id, ...(split ? { split: 'val' as const } : {}) }, { metrics: [def] }) : null;
    // The point estimate over the same eval rows as the interval (the honest copy excluded).
    const point = values && values.size ? [...values.values()].reduce((a, b) => a + b, 0) / values.size : (health?.metrics[0]?.value ?? entry.metrics[crit.metric] ?? null);
    if (point === null) checks.push({ check: 'success criterion', category: 'target', passed: null, detail: `${crit.metric} has no value for ${entry.id}` });
    else if (values && values.size >= 2) {
      const zero = new Map([...values].map(([k]) => [k, 0]));
      const c = comparePaired(zero, values, statOpts);
      const [lo, hi] = c.ci;
      const all = compare(lo, crit.op, crit.value) && compare(hi, crit.op, crit.value);
      const none = !compare(lo, crit.op, crit.value) && !compare(hi, crit.op, crit.value);
      checks.push({
        check: 'success criterion',
        category: 'target',
        passed: all ? true : none ? false : null,
        detail: `${crit.metric} = ${fmt(point)} (95% CI over ${c.n} tasks [${fmt(lo)}, ${fmt(hi)}]), needs ${crit.op} ${crit.value}${all ? '' : none ? '' : ' — within noise: a person must judge'}`,
      });
    } else checks.push({ check: 'success criterion', category: 'target', passed: compare(point, crit.op, crit.value), detail: `${crit.metric} = ${fmt(point)}, needs ${crit.op} ${crit.value} (no per-task interval for this metric)` });
  }

  // ---- side effects: a health dimension that newly alerts.
  if (nv && sb && nb) {
    const hv: HealthReport = await computeHealth(store, healthScope(entry.id), { thresholds });
    const hb: HealthReport = await computeHealth(store, healthScope(sb.version), { thresholds });
    const before = new Map(hb.metrics.map((m) => [m.name, m]));
    const skip = new Set<string>([...LEAK_METRICS, leakName, primaryName, crit?.metric ?? '']);
    const worse = hv.alerts.filter((m) => !skip.has(m.name) && (before.get(m.name)?.status ?? 'ok') === 'ok');
    checks.push({ check: 'side effects', category: 'side_effect', passed: worse.length === 0, detail: worse.length ? worse.map((m) => `${m.name} ${fmt(before.get(m.name)?.value)} → ${fmt(m.value)} (${m.dimension}, now ${m.status})`).join('; ') : `no health dimension newly alerts (${CATALOG.length} metrics checked)` });
  }

  // ---- the backtest's verdict, when one was recorded.
  const bt = [...entry.transitions].reverse().flatMap((t) => t.evidence).find((e) => e.kind === 'backtest');
  const btData = bt?.data as { verdict?: string; reasons?: string[] } | undefined;
  if (btData?.verdict === 'fail') checks.push({ check: 'backtest', category: 'backtest', passed: false, detail: `the recorded backtest failed: ${(btData.reasons ?? []).join('; ')}` });
  else if (bt) checks.push({ check: 'backtest', category: 'backtest', passed: true, detail: bt.summary });

  const failed = checks.filter((c) => c.passed === false);
  const undecided = checks.filter((c) => c.passed === null);
  const decision: GateReport['decision'] = failed.length ? 'reject' : undecided.length || !nv ? 'needs_human' : 'promote';
  return { schema: 1, version: entry.id, baseline: baseline?.id ?? null, decision, checks, comparisons, evalRollouts: { version: nv, baseline: nb, split }, flips: flipAnalysis, leaks: leakExamples, decidedAt: nowIso() };
}

export function gateDecision(r: GateReport): GateDecision {
  return {
    version: r.version as GateDecision['version'],
    gate: 'promotion',
    decision: r.decision,
    reasons: r.checks.map((c) => ({ check: c.check, passed: c.passed === true, detail: c.passed === null ? `UNDECIDED: ${c.detail}` : c.detail })),
    decidedAt: r.decidedAt,
    decidedBy: 'gate',
  };
}

/** Records the gate's decision and its evidence on the version (the ledger). */
export async function recordGate(h: Harness, r: GateReport): Promise<LedgerEntry> {
  let result!: LedgerEntry;
  await updateLedger(h, (ledger) => {
    const e = requireEntry(ledger, r.version);
    if (e.status === 'promoted' || e.status === 'rejected') throw new HarnessError(`${e.id} is already ${e.status}; its decision is final`);
    const metrics: Record<string, number> = { ...e.metrics };
    for (const [k, c] of Object.entries(r.comparisons)) if (Number.isFinite(c.after)) metrics[k] = Number(c.after.toFixed(6));
    const summary = `gate: ${r.decision.toUpperCase()} — ${r.checks.filter((c) => c.passed !== true).map((c) => `${c.passed === false ? 'FAIL' : '?'} ${c.check}`).join('; ') || 'all checks pass'}`;
    result = { ...e, metrics, decision: gateDecision(r), transitions: [...e.transitions, { from: e.status, to: e.status, at: nowIso(), by: h.actor, evidence: [{ kind: 'gate', summary, data: r }] }] };
    return { entries: [result], message: `${e.id}: ${summary}` };
  });
  return result;
}

export function formatGate(r: GateReport): string {
  const mark = (c: GateCheck) => (c.passed === true ? 'ok  ' : c.passed === false ? 'FAIL' : '??  ');
  return [
    `gate ${r.version}${r.baseline ? ` vs ${r.baseline}` : ''}: ${r.decision.toUpperCase().replace('_', '-')}`,
    `  eval rollouts: ${r.version} ${r.evalRollouts.version}, ${r.baseline ?? '-'} ${r.evalRollouts.baseline}${r.evalRollouts.split ? ` (split ${r.evalRollouts.split})` : ''}`,
    ...r.checks.map((c) => `  [${mark(c)}] ${c.category.padEnd(11)} ${c.check}: ${c.detail}`),
  ].join('\n');
}

import type { Dimension, Finding, Severity } from '../model';
import { LEAK_METRICS } from './catalog';
import { formatLeak, type HealthReport, type MetricResult, type SeriesPoint } from './health';

/**
 * The rule engine: IF/THEN over metric values and their trends across evaluations
 * (steps or versions). Built in: R1–R6 of METHOD.md and the leak rule (answer seen before
 * written, git history).
 */
export interface RuleContext {
  health: HealthReport;
  series: SeriesPoint[];
}

export interface Rule {
  id: string;
  title: string;
  severity: Severity;
  layer: string;
  /** The dimension its findings belong to (default: by rule, see evaluateRules). */
  dimension?: Dimension;
  /** A finding's evidence when the rule fires (and its severity, when not the rule's), null otherwise. */
  check(ctx: RuleContext): { detail: string; evidence: Record<string, number | null>; severity?: Severity } | null;
}

const val = (h: HealthReport, name: string) => h.metrics.find((m) => m.name === name)?.value ?? null;
const seriesOf = (s: SeriesPoint[], name: string) => s.map((p) => p.values[name] ?? null).filter((v): v is number => v !== null);
const rising = (xs: number[], n = 3) => xs.length >= n && xs.slice(-n).every((x, i, a) => i === 0 || x > a[i - 1]!);
const falling = (xs: number[], n = 3) => xs.length >= n && xs.slice(-n).every((x, i, a) => i === 0 || x < a[i - 1]!);
/** Flat = the last n values within ±tol of each other. */
const flat = (xs: number[], n = 3, tol = 0.02) => xs.length >= n && Math.max(...xs.slice(-n)) - Math.min(...xs.slice(-n)) <= tol;
const pct = (x: number | null) => `${((x ?? 0) * 100).toFixed(1)}%`;
const fmt = (x: number | null) => (x === null ? 'n/a' : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));

export const RULES: Rule[] = [
  {
    id: 'R1',
    title: 'Insufficient signal: many dead groups on a discrete reward',
    severity: 'critical',
    layer: 'reward (add a continuous component, e.g. a judge score, to break group homogeneity)',
    check({ health }) {
      const dead = val(health, 'dead_group_ratio');
      const top = val(health, 'top_reward_share');
      if (dead === null || top === null || !(dead > 0.3 && top > 0.5)) return null;
      return { detail: `dead-group ratio ${fmt(dead)} > 0.30 and one reward value holds ${fmt(top)} > 0.50 of rollouts`, evidence: { dead_group_ratio: dead, top_reward_share: top } };
    },
  },
  {
    id: 'R2',
    title: 'Echo trap: turns rising over the last 3 evaluations',
    severity: 'warning',
    layer: 'environment (turn limit) or behavior (repetition penalty)',
    check({ series }) {
      const t = seriesOf(series, 'turns');
      if (!rising(t)) return null;
      return { detail: `turns per trajectory ${t.slice(-3).map(fmt).join(' → ')}`, evidence: { turns_first: t.at(-3)!, turns_last: t.at(-1)! } };
    },
  },
  {
    id: 'R3',
    title: 'Exploration collapse: mean log-prob near zero, or entropy falling',
    severity: 'critical',
    layer: 'training stability (entropy bonus, temperature)',
    check({ health, series }): ReturnType<Rule['check']> {
      const lp = val(health, 'mean_logprob');
      const ent = seriesOf(series, 'entropy');
      if (lp !== null && lp > -0.05) return { detail: `mean log-prob ${fmt(lp)} > −0.05`, evidence: { mean_logprob: lp } };
      const collapse = entropyCollapse(health);
      if (collapse) return collapse;
      // Over evaluations: falling at each, and by more than half across the last three.
      if (falling(ent) && ent.at(-1)! < ent.at(-3)! / 2) return { detail: `entropy ${ent.slice(-3).map(fmt).join(' → ')}`, evidence: { entropy_last: ent.at(-1)! } };
      return null;
    },
  },
  {
    id: 'R3-REWARD',
    title: 'Reward rising while entropy collapses: the policy sharpens what it already does instead of exploring',
    severity: 'warning',
    layer: 'training stability (entropy bonus, clip-higher, temperature) before the gains plateau; check the reward for exploits (R4)',
    dimension: 'model_state',
    check({ health, series }) {
      const collapse = entropyCollapse(health);
      if (!collapse) return null;
      const gain = val(health, 'train_score_change');
      const r = seriesOf(series, 'reward_mean');
      if (gain !== null && gain > 0) return { detail: `the trainer's score rose by ${fmt(gain)} while ${collapse.detail}`, evidence: { ...collapse.evidence, train_score_change: gain } };
      if (rising(r)) return { detail: `reward ${r.slice(-3).map(fmt).join(' → ')} while ${collapse.detail}`, evidence: { ...collapse.evidence, reward_last: r.at(-1)! } };
      return null;
    },
  },
  {
    id: 'R4',
    title: 'Reward hacking: shaped reward rising while correctness is flat or falling',
    severity: 'critical',
    layer: 'reward (remove or cap the component that rises alone)',
    check({ series }) {
      const r = seriesOf(series, 'reward_mean');
      const p = seriesOf(series, 'pass_rate');
      if (!rising(r) || !(flat(p) || falling(p))) return null;
      return { detail: `reward ${r.slice(-3).map(fmt).join(' → ')} while pass rate ${p.slice(-3).map(fmt).join(' → ')}`, evidence: { reward_last: r.at(-1)!, pass_rate_last: p.at(-1)! } };
    },
  },
  {
    id: 'R5',
    title: 'Laziness: fewer tool calls, self-testing down more than 15 points, score flat',
    severity: 'warning',
    layer: 'behavior (self-test signal); check for efficiency bonuses (toxic rewards)',
    check({ series }) {
      const calls = seriesOf(series, 'tool_calls');
      const tests = seriesOf(series, 'self_test_rate');
      const pass = seriesOf(series, 'pass_rate');
      if (calls.length < 2 || tests.length < 2 || pass.length < 2) return null;
      const drop = tests[0]! - tests.at(-1)!;
      if (!(calls.at(-1)! < calls[0]! && drop > 0.15 && flat(pass, Math.min(3, pass.length), 0.03))) return null;
      return { detail: `tool calls ${fmt(calls[0]!)} → ${fmt(calls.at(-1)!)}, self-test rate down ${(drop * 100).toFixed(0)} points, pass rate flat`, evidence: { self_test_drop: drop, tool_calls_last: calls.at(-1)! } };
    },
  },
  {
    id: 'R6',
    title: 'Edit quality: trajectories edit but do not verify, and mostly fail',
    severity: 'warning',
    layer: 'behavior (reward verified edits) or environment (test feedback)',
    check({ health }) {
      const edit = val(health, 'edit_coverage');
      const test = val(health, 'self_test_rate');
      const pass = val(health, 'pass_rate');
      if (edit === null || test === null || pass === null || !(edit > 0.8 && test < 0.5 && pass < 0.5)) return null;
      return { detail: `edit coverage ${fmt(edit)} but self-test rate ${fmt(test)} and pass rate ${fmt(pass)}`, evidence: { edit_coverage: edit, self_test_rate: test, pass_rate: pass } };
    },
  },
  {
    id: 'LEAK',
    title: 'Information leak: trajectories saw the answer before writing it, or read git history',
    severity: 'critical',
    layer: 'environment (close the channel that showed the answer — git history, network, files outside the task — before the agent runs; re-evaluate: the score may be inflated)',
    check({ health }) {
      // The same thresholds as the gate's leak checks (health judged them, with the manifest's
      // overrides): critical where the gate rejects, a warning for a few trajectories below it.
      const hits = LEAK_METRICS.map((n) => health.metrics.find((m) => m.name === n)).filter((m): m is MetricResult => m?.status === 'critical' || m?.status === 'warning');
      if (!hits.length) return null;
      const critical = hits.some((m) => m.status === 'critical');
      const what = (m: MetricResult) =>
        m.name === 'git_history_share'
          ? `${pct(m.value)} of trajectories ran git log/show/blame/reflog`
          : `${pct(m.value)} of trajectories were shown their answer before writing it${m.leaks?.length ? ` (e.g. ${m.leaks.slice(0, 3).map(formatLeak).join('; ')})` : ''}`;
      const below = critical ? '' : ' — below the share at which the gate rejects a version, but read them: each such success was helped';
      return { detail: hits.map(what).join('; ') + below, evidence: Object.fromEntries(hits.map((m) => [m.name, m.value])), severity: critical ? 'critical' : 'warning' };
    },
  },
];

/** Entropy fell past the health report's threshold for entropy_drop (the catalog's, or the harness's). */
function entropyCollapse(health: HealthReport): { detail: string; evidence: Record<string, number | null> } | null {
  const m = health.metrics.find((x) => x.name === 'entropy_drop');
  if (!m || m.value === null || (m.status !== 'warning' && m.status !== 'critical')) return null;
  const ent = val(health, 'entropy');
  return { detail: `entropy fell ${(m.value * 100).toFixed(0)}% from the first to the last tenth of the logged steps (now ${fmt(ent)})`, evidence: { entropy_drop: m.value, entropy: ent } };
}

export function evaluateRules(ctx: RuleContext, rules: Rule[] = RULES): Finding[] {
  const findings: Finding[] = [];
  for (const rule of rules) {
    const hit = rule.check(ctx);
    if (!hit) continue;
    findings.push({
      id: `${rule.id}`,
      rule: rule.id,
      title: rule.title,
      severity: hit.severity ?? rule.severity,
      dimension: rule.dimension ?? (rule.id === 'R1' ? 'signal' : rule.id === 'R3' ? 'model_state' : rule.id === 'R4' ? 'results' : 'behavior'),
      evidence: Object.entries(hit.evidence).map(([metric, value]) => ({ metric, scope: {}, value, n: ctx.health.rollouts })),
      examples: [],
      suggestion: `${hit.detail}. Suggested layer: ${rule.layer}.`,
    });
  }
  return findings;
}

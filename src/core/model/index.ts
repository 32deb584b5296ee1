/**
 * Domain model of the EvoTrainer method (see METHOD.md): the nouns every layer speaks.
 *
 * Two things co-evolve: policy *versions* (one RL run produced by a single-factor
 * *intervention* on the harness, one git branch each) and the *diagnostic harness*
 * (metrics, rules, backtests, skills). These types are plain data so that the CLI,
 * the extension host, the language server and the webviews can share them.
 */

/** Identifies a version: `v0`, `v7`, … The branch is `evo/v7-<slug>`. */
export type VersionId = `v${number}`;

/** Where an intervention acts; escalation switches layer after repeated failures. */
export type Layer = 'reward' | 'filter' | 'environment' | 'signal' | 'behavior' | 'diagnostics' | 'infra' | 'data';

/** Lifecycle of a version. Rejected versions are kept as negative evidence, never deleted. */
export type VersionStatus = 'proposed' | 'backtested' | 'training' | 'evaluated' | 'promoted' | 'rejected';

/** Step 5: exactly one falsifiable hypothesis: "If we change X, metric Y improves because Z". */
export interface Hypothesis {
  /** X: the single factor changed. */
  change: string;
  /** Y: the metric expected to move. */
  targetMetric: string;
  /** Z: the mechanism. */
  because: string;
  /** Falsifiable success criterion, e.g. `dead_group_ratio < 0.30`. */
  successCriterion: string;
}

/** Step 6: one variable only, with what stays frozen and how to roll back. */
export interface Intervention {
  layer: Layer;
  /** The one declared factor (a file or config key family). */
  factor: string;
  description: string;
  /** Paths changed by the intervention commit. */
  changedPaths: string[];
  frozen: string[];
  rollbackPlan: string;
  /** Set when the single-factor rule was overridden by a person, with their reason. */
  singleFactorOverride?: { reason: string; by: string };
}

export type Split = 'train' | 'val';

/** What a run's tasks are: which metrics, thresholds and failure modes mean something for it. */
export const TASK_DOMAINS = ['swe', 'code', 'math', 'qa', 'other'] as const;
export type TaskDomain = (typeof TASK_DOMAINS)[number];

/** A domain as people name it (a manifest's `domain: coding`) in the catalog's words; null when it names none of them. */
export function normalizeDomain(name: string | null | undefined): TaskDomain | null {
  const d = (name ?? '').trim().toLowerCase();
  if (!d) return null;
  if ((TASK_DOMAINS as readonly string[]).includes(d)) return d as TaskDomain;
  // A word of the name decides (`toy-swe`, `swe_bench`, `competition-math`).
  const words = new Set(d.split(/[^a-z0-9]+/).filter(Boolean));
  const any = (...w: string[]) => w.some((x) => words.has(x));
  if (any('swe', 'swebench', 'software', 'repo', 'repository')) return 'swe';
  if (any('code', 'coding', 'programming', 'codegen')) return 'code';
  if (any('math', 'maths', 'mathematics', 'gsm8k', 'arithmetic')) return 'math';
  if (any('qa', 'question', 'questions', 'trivia', 'reading')) return 'qa';
  return 'other';
}

export type StepRole = 'system' | 'user' | 'assistant' | 'tool';

/** One turn of a multi-turn trajectory; behavior metrics are computed from these. */
export interface Step {
  rolloutRef: string;
  turn: number;
  role: StepRole;
  actionKind: 'command' | 'edit' | 'search' | 'test' | 'submit' | 'message' | 'observation' | 'other';
  command: string | null;
  exitCode: number | null;
  observationBytes: number | null;
  formatError: boolean;
  timeout: boolean;
  truncated: boolean;
  tokens: number | null;
}

/** The five automated dimensions plus the sampled one (METHOD.md, "The diagnostic harness"). */
export type Dimension = 'results' | 'signal' | 'behavior' | 'efficiency' | 'model_state' | 'test_structure' | 'sampling';

export type Severity = 'info' | 'warning' | 'critical';

export interface Threshold {
  severity: Exclude<Severity, 'info'>;
  op: '>' | '>=' | '<' | '<=';
  value: number;
}

/** A metric of the catalog: how it is defined and when it alerts. */
export interface Metric {
  name: string;
  description: string;
  dimension: Dimension;
  /** Domains it applies to; empty = all. */
  domains: string[];
  unit: 'ratio' | 'count' | 'tokens' | 'turns' | 'score' | 'nats' | 'correlation';
  thresholds: Threshold[];
}

/** A computed value of a metric over a scope (run, step range, version). */
export interface MetricValue {
  metric: string;
  scope: { run?: string; version?: VersionId; steps?: [number, number] };
  /** null = not available in this dump (e.g. log-probs not logged). */
  value: number | null;
  n: number;
}

/** Something the health report or a rule raised, with the evidence behind it. */
export interface Finding {
  id: string;
  rule: string;
  title: string;
  severity: Severity;
  dimension: Dimension;
  evidence: MetricValue[];
  /** Example rollouts (raw refs) a person can read. */
  examples: string[];
  suggestion?: string;
}

export type GateKind = 'backtest' | 'promotion';

/** A promotion (or backtest) gate's verdict, with the reasons a reviewer reads. */
export interface GateDecision {
  version: VersionId;
  gate: GateKind;
  decision: 'promote' | 'reject' | 'pass' | 'fail' | 'needs_human';
  reasons: { check: string; passed: boolean; detail: string }[];
  decidedAt: string;
  decidedBy: 'gate' | 'human';
}

export type SkillCategory = 'reward_design' | 'filter_mechanism' | 'training_stability' | 'evaluation_protocol' | 'cross_domain_transfer';

/** A reusable lesson distilled from a successful version. */
export interface Skill {
  id: string;
  title: string;
  category: SkillCategory;
  trigger: string;
  intervention: string;
  expectedOutcome: string;
  validationEvidence: { version: VersionId; domain: string; summary: string }[];
  /** Promoted to the shared library only after it worked in at least 2 domains. */
  domains: string[];
}

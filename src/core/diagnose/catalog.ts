import type { Dimension, Metric, Threshold } from '../model';

/**
 * Where a metric's SQL is evaluated: over rollouts, groups, distinct reward values, pairs
 * of rollouts of one group, or the trainer's logged curves (see CURVES).
 */
export type MetricSource = 'rollouts' | 'groups' | 'rewards' | 'pairs' | 'curves';

/**
 * The trainer curves the catalog reads, each under the names trainers log it, first
 * match per run wins: verl (`actor/*`, `critic/*`), TRL (`entropy`, `kl`, `clip_ratio/…`),
 * and the same keys as TensorBoard tags or MLflow metrics. Over a scope, a curve metric's
 * SQL sees one row per (run, curve, step) with `name`, `value`, and `head` / `tail`:
 * whether the step is in the first / last tenth of that run's logged steps (at least one).
 */
export const CURVES: Record<string, string[]> = {
  entropy: ['actor/entropy', 'actor/entropy_loss', 'entropy', 'train/entropy', 'policy/entropy_avg'],
  kl: ['actor/kl_loss', 'critic/kl', 'kl', 'objective/kl', 'train/kl'],
  ppo_kl: ['actor/ppo_kl', 'policy/approxkl_avg'],
  grad_norm: ['actor/grad_norm', 'grad_norm', 'train/grad_norm'],
  clip_ratio: ['actor/pg_clipfrac', 'clip_ratio/region_mean', 'clip_ratio', 'train/clip_ratio', 'policy/clipfrac_avg'],
  score: ['critic/score/mean', 'reward', 'train/reward', 'critic/rewards/mean'],
};

/** Mean of a curve over the last tenth of its logged steps. */
const tail = (curve: string) => `avg(value) filter (where name = '${curve}' and tail)`;
const head = (curve: string) => `avg(value) filter (where name = '${curve}' and head)`;

export interface MetricDefinition extends Metric {
  source: MetricSource;
  /** An aggregate SQL expression over the source; null = not available in this data. */
  sql: string;
  /**
   * The per-rollout value `metric validate` scores against success, when there is one: its
   * mean over rollouts is the metric (a rate's feature is a 0/1 or a per-rollout rate, not a count).
   */
  feature?: string;
  /** Domains whose runs the built-in thresholds are for (empty/undefined = all); a manifest override applies everywhere. */
  thresholdDomains?: string[];
  /** Higher is healthier (for reading trends); undefined = neither. */
  higherIsBetter?: boolean;
}

const warn = (op: Threshold['op'], value: number): Threshold => ({ severity: 'warning', op, value });
const crit = (op: Threshold['op'], value: number): Threshold => ({ severity: 'critical', op, value });

/**
 * Leak metrics: above 5% critical (the gate rejects), above 0 a warning (read the
 * trajectories). Health, the LEAK rule and the gate read these same thresholds, with the
 * manifest's overrides (see leakThresholdOverrides).
 */
const LEAK_THRESHOLDS: Threshold[] = [crit('>', 0.05), warn('>', 0)];
/** The built-in leak metrics: each one a cause the gate and the LEAK rule name. */
export const LEAK_METRICS = ['answer_in_context_share', 'git_history_share'] as const;

const m = (name: string, dimension: Dimension, unit: Metric['unit'], description: string, source: MetricSource, sql: string, extra: Partial<MetricDefinition> = {}): MetricDefinition => ({
  name,
  dimension,
  unit,
  description,
  source,
  sql,
  domains: [],
  thresholds: [],
  ...extra,
});

/** Tasks solved by editing code and running it: where edits, tests and turn limits mean something. */
const CODE = ['swe', 'code'];

/**
 * The built-in metric catalog (METHOD.md, "The diagnostic harness"), thresholds from the
 * release as defaults. A harness overrides thresholds in its manifest.
 */
export const CATALOG: MetricDefinition[] = [
  // results
  m('pass_rate', 'results', 'ratio', 'Avg@k: mean binary correctness over all rollouts (k = rollouts per task).', 'rollouts', 'avg(correct::int)', { higherIsBetter: true }),
  m('pass_at_k', 'results', 'ratio', 'Share of groups (tasks) with at least one correct rollout.', 'groups', 'avg(any_correct::int)', { higherIsBetter: true }),
  m('reward_mean', 'results', 'score', 'Mean total reward.', 'rollouts', 'avg(reward)', { higherIsBetter: true }),
  m('reward_std', 'results', 'score', 'Standard deviation of the total reward.', 'rollouts', 'stddev_pop(reward)'),
  m('dead_group_ratio', 'results', 'ratio', 'Share of groups (≥ 2 rollouts) whose rewards have zero variance: no learning signal.', 'groups', 'avg((v = 0)::int) filter (where n >= 2)', {
    thresholds: [crit('>', 0.5), warn('>', 0.3)],
    higherIsBetter: false,
  }),
  m('reward_spread', 'results', 'score', 'Mean within-group standard deviation of the reward.', 'groups', 'avg(sqrt(v)) filter (where n >= 2)', { thresholds: [warn('<', 0.05)], higherIsBetter: true }),
  m('top_reward_share', 'results', 'ratio', 'Share of rollouts holding the single most common reward value (discreteness).', 'rewards', 'max(c)::double / sum(c)'),
  // signal
  m('effective_data_share', 'signal', 'ratio', 'Share of rollouts in groups with reward variance (non-dead).', 'groups', 'sum(n) filter (where n >= 2 and v > 0)::double / nullif(sum(n) filter (where n >= 2), 0)', { higherIsBetter: true }),
  m('advantage_mean', 'signal', 'score', 'Mean advantage, where the dump logs it.', 'rollouts', 'avg(advantage)'),
  m('advantage_abs_mean', 'signal', 'score', 'Mean absolute advantage, where logged (near 0 = no signal).', 'rollouts', 'avg(abs(advantage))'),
  // behavior
  m('tool_calls', 'behavior', 'count', 'Tool (shell) calls per trajectory.', 'rollouts', 'avg(tool_calls) filter (where has_steps)', { feature: 'tool_calls' }),
  m('tool_failure_rate', 'behavior', 'ratio', 'Share of tool calls that exited non-zero.', 'rollouts', 'sum(tool_failures) filter (where has_steps)::double / nullif(sum(exits) filter (where has_steps), 0)', { feature: 'tool_failures::double / nullif(exits, 0)', higherIsBetter: false }),
  m('self_test_rate', 'behavior', 'ratio', 'Share of trajectories that run tests or a reproduction script.', 'rollouts', 'avg((test_runs > 0)::int) filter (where has_steps)', { feature: '(test_runs > 0)::int', higherIsBetter: true, domains: CODE }),
  m('edit_coverage', 'behavior', 'ratio', 'Share of trajectories that edit a file.', 'rollouts', 'avg((edits > 0)::int) filter (where has_steps)', { feature: '(edits > 0)::int', higherIsBetter: true, domains: CODE }),
  m('search_before_edit_rate', 'behavior', 'ratio', 'Share of editing trajectories that searched or read before the first edit.', 'rollouts', 'avg((first_search_turn < first_edit_turn)::int) filter (where has_steps and edits > 0)', { feature: '(first_search_turn < first_edit_turn)::int', higherIsBetter: true, domains: CODE }),
  m('git_history_share', 'behavior', 'ratio', 'Share of trajectories running git history commands (log, show, blame, reflog…): an information leak when the reference fix is in history.', 'rollouts', 'avg(git_history::int) filter (where has_steps)', {
    thresholds: LEAK_THRESHOLDS,
    feature: 'git_history::int',
    higherIsBetter: false,
    domains: CODE,
  }),
  m(
    'answer_in_context_share',
    'behavior',
    'ratio',
    'Share of trajectories whose credited answer (the distinctive added lines of the submitted patch where they land; else the reference answer) appeared in a command output, tool result or environment message before the agent wrote it: an information leak, whatever channel carried it.',
    'rollouts',
    'avg(answer_in_context::int) filter (where answer_checked)',
    { thresholds: LEAK_THRESHOLDS, feature: 'answer_in_context::int', higherIsBetter: false },
  ),
  m('solution_diversity', 'behavior', 'ratio', '1 − Jaccard similarity of the edited-file sets of two rollouts of one group, averaged over pairs (0 = every sample edits the same files).', 'pairs', 'avg(1 - jaccard)', { higherIsBetter: true, domains: CODE }),
  m('format_error_rate', 'behavior', 'ratio', 'Share of agent turns the harness rejected for their format.', 'rollouts', 'sum(format_errors) filter (where has_steps)::double / nullif(sum(assistant_turns) filter (where has_steps), 0)', { thresholds: [warn('>', 0.3)], feature: 'format_errors::double / nullif(assistant_turns, 0)', higherIsBetter: false }),
  m('timeout_rate', 'behavior', 'ratio', 'Share of trajectories with a command that timed out.', 'rollouts', 'avg((timeouts > 0)::int) filter (where has_steps)', { feature: '(timeouts > 0)::int', higherIsBetter: false }),
  // efficiency
  m('turns', 'efficiency', 'turns', 'Agent turns per trajectory (< 5: abandonment; > 50: echo trap).', 'rollouts', 'avg(assistant_turns) filter (where has_steps)', { thresholds: [warn('<', 5), warn('>', 50)], thresholdDomains: CODE, feature: 'assistant_turns' }),
  m('first_edit_turn', 'efficiency', 'turns', 'Turn of the first edit, over editing trajectories.', 'rollouts', 'avg(first_edit_turn) filter (where has_steps and edits > 0)', { feature: 'first_edit_turn', domains: CODE }),
  m('response_tokens', 'efficiency', 'tokens', 'Response tokens per rollout, where logged.', 'rollouts', 'avg(response_tokens)', { feature: 'response_tokens' }),
  m('response_chars', 'efficiency', 'count', 'Response length in characters.', 'rollouts', 'avg(response_chars)', { feature: 'response_chars' }),
  m('max_same_tool_streak', 'efficiency', 'count', 'Longest run of consecutive calls to the same tool, per trajectory.', 'rollouts', 'avg(max_same_tool) filter (where has_steps)', { feature: 'max_same_tool' }),
  m('truncation_rate', 'efficiency', 'ratio', 'Share of responses stopped at the length limit.', 'rollouts', "avg(coalesce(stop_reason in ('length', 'truncated', 'max_tokens', 'max_length'), false)::int)", { thresholds: [warn('>', 0.15)], higherIsBetter: false }),
  m('observation_truncation_rate', 'behavior', 'ratio', 'Share of trajectories where the environment cut a command output (too long).', 'rollouts', 'avg((truncations > 0)::int) filter (where has_steps)', { feature: '(truncations > 0)::int' }),
  // model state: from the trainer's curves (`evotrainer import` of its log, metrics file or
  // event files); mean log-prob only where a dump logs it (no importer stores log-probs yet).
  m('mean_logprob', 'model_state', 'nats', 'Mean token log-probability (> −0.05: exploration collapse).', 'rollouts', 'null', { thresholds: [warn('>', -0.05)] }),
  m('entropy', 'model_state', 'nats', "Mean token entropy, from the trainer's curve: mean over the last tenth of the logged steps.", 'curves', tail('entropy'), { higherIsBetter: true }),
  m('entropy_drop', 'model_state', 'ratio', "How far entropy fell: 1 − (last tenth of the steps) / (first tenth). > 0.5 warning, > 0.8 critical: exploration collapse.", 'curves', `1 - ${tail('entropy')} / nullif(${head('entropy')}, 0)`, {
    thresholds: [crit('>', 0.8), warn('>', 0.5)],
    higherIsBetter: false,
  }),
  m('kl', 'model_state', 'nats', "KL to the reference policy (the trainer's KL loss or in-reward KL), last tenth of the steps.", 'curves', tail('kl')),
  m('ppo_kl', 'model_state', 'nats', 'Approximate KL between the policy before and after each update, last tenth of the steps.', 'curves', tail('ppo_kl')),
  m('grad_norm', 'model_state', 'score', 'Gradient norm of the policy update, last tenth of the steps.', 'curves', tail('grad_norm')),
  m('grad_norm_growth', 'model_state', 'score', 'Gradient norm, last tenth of the steps over the first tenth (> 10: the updates are blowing up).', 'curves', `${tail('grad_norm')} / nullif(${head('grad_norm')}, 0)`, {
    thresholds: [warn('>', 10)],
    higherIsBetter: false,
  }),
  m('clip_ratio', 'model_state', 'ratio', 'Share of tokens whose policy ratio was clipped (PPO / GRPO clip fraction), last tenth of the steps (> 0.2: updates too large).', 'curves', tail('clip_ratio'), {
    thresholds: [warn('>', 0.2)],
    higherIsBetter: false,
  }),
  m('train_score_change', 'results', 'score', "Change of the trainer's logged score (mean reward of the training batches): last tenth of the steps minus the first tenth.", 'curves', `${tail('score')} - ${head('score')}`, { higherIsBetter: true }),
  // test structure
  m('fail_to_pass_tests', 'test_structure', 'count', 'FAIL_TO_PASS tests per task (SWE-bench verdicts).', 'rollouts', 'avg(fail_to_pass_tests)', { feature: 'fail_to_pass_tests', domains: ['swe'] }),
  // domain extras
  m('length_correctness_corr', 'results', 'correlation', 'Correlation of response length with correctness (> 0.3: length gaming).', 'rollouts', 'corr(response_chars::double, correct::int::double)', { domains: ['math'], thresholds: [warn('>', 0.3)] }),
  m('no_answer_rate', 'results', 'ratio', 'Share of rollouts with no extractable answer.', 'rollouts', 'avg(no_answer::int) filter (where not has_steps)', { domains: ['math', 'qa'], higherIsBetter: false }),
];

export function metricByName(name: string): MetricDefinition | undefined {
  return CATALOG.find((x) => x.name === name);
}

/**
 * Per-rollout failure modes, classified from the rollout's features and steps. The first
 * mode that applies wins, most specific first; a correct rollout is 'success' unless it
 * leaked (a leaking success is the invalid kind METHOD.md warns about).
 *
 * A rollout whose outcome is unknown (no verdict) gets a mode only from a sign of failure
 * in itself (a leak, a format-error loop, a timeout, truncation, no answer, no edit on a
 * code task); the behaviours a success can share (few or many turns, no test run) name a
 * failure only when the rollout failed. The edit and test modes are for code tasks (run
 * domain swe or code, or not recorded), not for math or QA.
 */
export const FAILURE_MODES = [
  'leak',
  'format_error_loop',
  'timeout',
  'abandonment',
  'echo_trap',
  'no_edit',
  'test_never_run',
  'truncation',
  'no_extractable_answer',
  'wrong_answer',
  'success',
  'unknown',
] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

export const FAILURE_MODE_VIEW = `
create or replace view rollout_failure_modes as
select f.id, f.run_id, f.version, f.step, f.split, f.group_id, f.correct, f.reward,
  case
    when git_history or answer_in_context then 'leak'
    when correct then 'success'
    when format_errors >= 3 then 'format_error_loop'
    when timeouts > 0 then 'timeout'
    when code_task and correct = false and assistant_turns < 5 then 'abandonment'
    when code_task and correct = false and assistant_turns > 50 then 'echo_trap'
    when code_task and edits = 0 then 'no_edit'
    when code_task and correct = false and test_runs = 0 then 'test_never_run'
    when coalesce(stop_reason in ('length', 'truncated', 'max_tokens', 'max_length'), false) then 'truncation'
    when not has_steps and no_answer then 'no_extractable_answer'
    when correct = false then 'wrong_answer'
    else 'unknown'
  end as failure_mode
from (select rf.*, rf.has_steps and coalesce(ru.domain in ('swe', 'code'), true) as code_task
      from rollout_features rf left join runs ru on ru.id = rf.run_id) f`;

/** The intervention layer a failure mode usually calls for (a suggestion, not a rule). */
export const SUGGESTED_LAYER: Record<FailureMode, string> = {
  leak: 'environment (close the channel that showed the answer: git history, network, files outside the task)',
  format_error_loop: 'reward (a format component) or environment (clearer feedback)',
  timeout: 'environment (command time limits)',
  abandonment: 'behavior (penalize early exit; check the reward for exit bonuses)',
  echo_trap: 'environment (turn limit) or behavior (repetition penalty)',
  no_edit: 'behavior',
  test_never_run: 'behavior (self-test signal)',
  truncation: 'data / environment (length limits)',
  no_extractable_answer: 'reward (format component) or data (answer format in the prompt)',
  wrong_answer: 'signal (is there learning signal? dead groups)',
  success: '',
  unknown: '',
};

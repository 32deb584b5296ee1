/**
 * Rollout-level features: one row per rollout, computed from its steps, queryable like
 * any table (`select * from rollout_features where git_history`). Every behavior and
 * efficiency metric is an aggregate of these, and `metric validate` scores them one by one.
 */
import { ANSWER_CONTEXT_COLUMNS, ANSWER_CONTEXT_JOIN } from './answerContext';

export const FEATURES_VIEW = `
create or replace view rollout_features as
with assistant as (
  select rollout_id, turn, command, action_kind, format_error,
         row_number() over (partition by rollout_id order by turn) as n,
         nullif(regexp_extract(trim(coalesce(command, '')), '^([A-Za-z0-9_./-]+)', 1), '') as tool
  from steps where role = 'assistant'
),
islands as (
  select rollout_id, tool, n - row_number() over (partition by rollout_id, tool order by n) as island
  from assistant where tool is not null
),
streaks as (
  select rollout_id, max(c) as max_same_tool from (select rollout_id, tool, island, count(*) as c from islands group by all) group by rollout_id
),
acts as (
  select rollout_id,
         count(*) filter (where command is not null) as tool_calls,
         count(*) filter (where action_kind = 'test') as test_runs,
         count(*) filter (where action_kind = 'edit') as edits,
         count(*) filter (where action_kind = 'search') as searches,
         min(n) filter (where action_kind = 'edit') as first_edit_turn,
         min(n) filter (where action_kind = 'search') as first_search_turn,
         count(*) filter (where format_error) as format_errors,
         count(*) as assistant_turns,
         bool_or(coalesce(regexp_matches(command, '(^|[;&|(\\s])git\\s+(-C\\s+\\S+\\s+)?(log|show|blame|reflog|rev-list|whatchanged|cat-file)\\b'), false)) as git_history,
         -- The files an edit touches: the target of a redirect or tee, or sed -i's last argument.
         list_sort(list_distinct(list(coalesce(
           nullif(regexp_extract(command, '(?:>>?|\\btee)\\s*[''"]?([A-Za-z0-9_./-]+\\.[A-Za-z0-9]+)', 1), ''),
           nullif(regexp_extract(command, '\\bsed\\s+-i\\S*\\s.*\\s[''"]?([A-Za-z0-9_./-]+\\.[A-Za-z0-9]+)[''"]?\\s*$', 1), '')
         )) filter (where action_kind = 'edit'))) as edited_files
  from assistant group by rollout_id
),
obs as (
  select rollout_id,
         count(*) filter (where exit_code is not null) as exits,
         count(*) filter (where exit_code is not null and exit_code <> 0) as tool_failures,
         count(*) filter (where timeout) as timeouts,
         count(*) filter (where truncated) as truncations
  from steps where role <> 'assistant' group by rollout_id
)
select r.id, r.run_id, r.version, r.framework, r.step, r.split, r.group_id, r.prompt_id, r.sample_index,
       r.reward, r.correct, r.advantage, r.num_turns, r.response_tokens, r.response_chars,
       r.stop_reason, r.extracted_answer, r.data_source,
       a.assistant_turns is not null as has_steps,
       coalesce(a.tool_calls, 0) as tool_calls, coalesce(a.test_runs, 0) as test_runs,
       -- A rollout that submitted a non-empty patch has edited, whatever its commands looked like.
       greatest(coalesce(a.edits, 0), coalesce(try_cast(json_extract(r.extra, '$.patch_submitted') as boolean), false)::int) as edits,
       coalesce(a.searches, 0) as searches, a.first_edit_turn, a.first_search_turn,
       coalesce(a.format_errors, 0) as format_errors, coalesce(a.assistant_turns, 0) as assistant_turns,
       coalesce(a.git_history, false) as git_history,
       coalesce(o.exits, 0) as exits, coalesce(o.tool_failures, 0) as tool_failures,
       coalesce(o.timeouts, 0) as timeouts, coalesce(o.truncations, 0) as truncations,
       st.max_same_tool, coalesce(a.edited_files, []) as edited_files,
       coalesce(r.no_answer, false) as no_answer,
       try_cast(json_extract(r.extra, '$.tests.f2p_success') as integer) + try_cast(json_extract(r.extra, '$.tests.f2p_failure') as integer) as fail_to_pass_tests,
       ${ANSWER_CONTEXT_COLUMNS}
from rollouts r
left join acts a on a.rollout_id = r.id
left join obs o on o.rollout_id = r.id
left join streaks st on st.rollout_id = r.id
${ANSWER_CONTEXT_JOIN}`;

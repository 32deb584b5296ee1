-- description: Share of trajectories with fewer than 5 agent turns (abandonment)
-- dimension: efficiency
-- unit: ratio
-- warning: > 0.2
select id, (assistant_turns < 5)::int as value
from rollout_features
where has_steps

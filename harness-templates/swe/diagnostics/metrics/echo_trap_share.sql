-- description: Share of trajectories with more than 50 agent turns (echo trap)
-- dimension: efficiency
-- unit: ratio
-- warning: > 0.2
select id, (assistant_turns > 50)::int as value
from rollout_features
where has_steps

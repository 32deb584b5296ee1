-- description: Mean training reward minus mean binary correctness: how much of the reward is shaping, not correctness (R4 watches it rise)
-- dimension: results
-- unit: score
-- warning: > 0.1
-- critical: > 0.25
select avg(reward) - avg(coalesce(correct, false)::int) as value
from rollouts
where reward is not null

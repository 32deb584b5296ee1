-- description: Share of programs over the time limit (TLE)
-- dimension: efficiency
-- unit: ratio
-- warning: > 0.2
select id, coalesce(try_cast(json_extract(reward_components, '$.timeout') as double), 0) as value
from rollouts
where reward_components is not null

-- description: Share of responses the reward found no final answer in (its no_answer component: truncation, rambling, a missing answer line)
-- dimension: results
-- unit: ratio
-- warning: > 0.1
-- critical: > 0.3
select id, try_cast(json_extract(reward_components, '$.no_answer') as double) as value
from rollouts
where json_extract(reward_components, '$.no_answer') is not null

-- description: Share of programs that do not compile (CE, including a missing code block)
-- dimension: results
-- unit: ratio
-- warning: > 0.1
select id, coalesce(try_cast(json_extract(reward_components, '$.compile_error') as double), 0) as value
from rollouts
where reward_components is not null

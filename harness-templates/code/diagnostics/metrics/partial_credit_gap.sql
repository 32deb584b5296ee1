-- description: Mean share of tests passed minus the pass rate: near-misses a shaped correctness reward could turn into signal
-- dimension: signal
-- unit: score
select avg(coalesce(try_cast(json_extract(reward_components, '$.partial') as double), 0))
       - avg(coalesce(correct, false)::int) as value
from rollouts
where reward_components is not null

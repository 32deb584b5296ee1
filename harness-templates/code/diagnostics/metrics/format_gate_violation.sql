-- description: Share of responses without a fenced code block (the format gate; > 30% is the release's alert)
-- dimension: behavior
-- unit: ratio
-- warning: > 0.3
select id, (coalesce(try_cast(json_extract(reward_components, '$.format') as double), 1) = 0)::int as value
from rollouts
where reward_components is not null

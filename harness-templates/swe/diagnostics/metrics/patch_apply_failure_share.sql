-- description: Share of submitted patches that do not apply at the base commit
-- dimension: results
-- unit: ratio
-- warning: > 0.2
select id, 1 - coalesce(try_cast(json_extract(reward_components, '$.patch_applied') as double), 0) as value
from rollouts
where reward_components is not null
  and coalesce(try_cast(json_extract(reward_components, '$.no_patch') as double), 0) = 0

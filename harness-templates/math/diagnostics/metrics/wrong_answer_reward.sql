-- description: Mean training reward of incorrect rollouts (0 while the reward is pure correctness; rising = shaping pays for wrong answers)
-- dimension: results
-- unit: score
-- warning: > 0.1
-- critical: > 0.25
select id, reward as value
from rollouts
where reward is not null and correct is not null and not correct

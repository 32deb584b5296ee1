"""Group and trajectory filters of the toy-math harness (switches in filters/config.json).

keep_group(group): a GRPO group (list of rollout dicts: id, prompt, response,
ground_truth, data_source, score, acc, turns, extra_info) takes part in the update.
With `drop_zero_variance_groups` a group whose scores are all equal (a dead group: zero
advantage) is dropped and the trainer samples another in its place (dynamic sampling),
up to train/config.json `max_sample_batches` rounds.
keep_trajectory(rollout): a rollout takes part in the loss; `max_turns_truncate` drops
rollouts longer than that many turns.
"""

import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "config.json"), encoding="utf-8") as _f:
    CONFIG = json.load(_f)


def keep_group(group):
    if CONFIG.get("drop_zero_variance_groups", False):
        scores = [r["score"] for r in group]
        if max(scores) - min(scores) <= float(CONFIG.get("min_score_spread", 0.0)):
            return False
    return True


def keep_trajectory(rollout):
    limit = CONFIG.get("max_turns_truncate")
    if limit is not None and rollout["turns"] > int(limit):
        return False
    return True

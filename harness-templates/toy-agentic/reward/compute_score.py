"""Reward of the toy-swe harness, in verl's custom reward signature.

compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict with
`score` and every component: `acc` (binary correctness: the hidden test passes after
submit) and each shaped term. Terms and weights live in reward/config.json, so an
intervention is a one-key change there.

extra_info is the environment's outcome of the episode (`resolved`, `step_limit`, …). To
re-score a dumped rollout, pass its dump row: the row's `acc` stands in for `resolved`,
and the step limit falls back to env/config.json.
"""

import json
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "config.json"), encoding="utf-8") as _f:
    CONFIG = json.load(_f)
try:
    with open(os.path.join(_HERE, "..", "env", "config.json"), encoding="utf-8") as _f:
        _STEP_LIMIT = int(json.load(_f).get("step_limit", 10))
except (OSError, ValueError, TypeError, AttributeError):
    _STEP_LIMIT = 10

_BLOCK = re.compile(r"```bash\n(.*?)\n```", re.S)


def commands(solution_str):
    """The command of every assistant turn of a multi-turn transcript."""
    return _BLOCK.findall(solution_str)


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    info = extra_info or {}
    weights = CONFIG.get("weights", {})
    cmds = commands(solution_str)
    turns = len(cmds)
    limit = info.get("step_limit") or _STEP_LIMIT
    bug_file = str(ground_truth).split(":", 1)[0].strip()
    resolved = info["resolved"] if "resolved" in info else float(info.get("acc") or 0) > 0
    acc = 1.0 if resolved else 0.0
    comps = {
        "acc": acc,
        # shorter is better: 1 for a one-turn episode, 0 at the step limit
        "efficiency": max(0.0, 1.0 - (turns - 1) / max(1, limit - 1)),
        # the same, paid only for a resolved task (a bonus for solving fast)
        "fast_solve": acc * max(0.0, 1.0 - (turns - 1) / max(1, limit - 1)),
        # partial credit for localization: an edit of the buggy file
        "localization": 1.0 if any(c.startswith("sed -i") and c.endswith(bug_file) for c in cmds) else 0.0,
        # ran the failing test near the end
        "self_test": 1.0 if cmds and any(c.startswith("python -m pytest") for c in cmds[-3:]) else 0.0,
        # test runs, half the step limit = 1 (a reward on a behavior metric: it can be gamed)
        "test_runs": min(1.0, sum(c.startswith("python -m pytest") for c in cmds) / max(1, limit // 2)),
    }
    score = sum(float(weights.get(k, 0.0)) * v for k, v in comps.items())
    comps["score"] = score
    return comps

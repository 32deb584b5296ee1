"""Reward of the toy-math harness, in verl's custom reward signature.

compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict with
`score` and every component: `acc` (binary correctness of the submitted answer) and each
shaped term. Terms and weights live in reward/config.json, so an intervention is a
one-key change there.
"""

import json
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(_HERE, "config.json"), encoding="utf-8") as _f:
    CONFIG = json.load(_f)
try:
    with open(os.path.join(_HERE, "..", "env", "config.json"), encoding="utf-8") as _f:
        _STEP_LIMIT = int(json.load(_f).get("step_limit", 12))
except (OSError, ValueError, TypeError, AttributeError):
    _STEP_LIMIT = 12

_BLOCK = re.compile(r"```bash\n(.*?)\n```", re.S)
_BOXED = re.compile(r"\\boxed\{(-?\d+)\}")


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    info = extra_info or {}
    weights = CONFIG.get("weights", {})
    cmds = _BLOCK.findall(solution_str)
    turns = len(cmds)
    limit = info.get("step_limit") or _STEP_LIMIT
    boxed = _BOXED.findall(solution_str)
    submitted = bool(info["submitted"]) if "submitted" in info else bool(cmds) and cmds[-1].strip() == "submit"
    acc = 1.0 if submitted and boxed and boxed[-1] == str(ground_truth).strip() else 0.0
    comps = {
        "acc": acc,
        "efficiency": max(0.0, 1.0 - (turns - 1) / max(1, limit - 1)),
        # process credit: share of the chain's steps computed right before the first error
        "progress": float(info.get("progress", 0.0)),
    }
    comps["score"] = sum(float(weights.get(k, 0.0)) * v for k, v in comps.items())
    return comps

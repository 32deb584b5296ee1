"""Group and trajectory filters, applied to rollouts before the policy update.

A rollout is a dict with keys id, prompt, response, ground_truth, data_source, score, acc,
turns, extra_info. A group is the list of rollouts sampled for one prompt (a GRPO group).

    keep_group(group) -> bool         False drops the whole group from the update
    keep_trajectory(rollout) -> bool  False drops one rollout

Defaults (env/config.json, "filters"): drop groups whose rewards have zero variance (they
carry no GRPO advantage: the method's dead groups) or whose standard deviation is under
min_group_std (the standard-deviation group filter); optionally drop truncated responses
and trajectories outside [min_turns, max_turns] (null = no bound; under 5 turns is the
method's "abandonment", over 50 its "echo trap").
"""
from __future__ import annotations

import json
import math
import os

_CONFIG_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "env", "config.json")
_DEFAULTS = {"drop_zero_variance_groups": True, "min_group_std": 0.0, "drop_truncated": False, "max_response_chars": 400000,
             "min_turns": None, "max_turns": None}


def load_config(path: str = _CONFIG_FILE) -> dict:
    cfg = dict(_DEFAULTS)
    try:
        with open(path, encoding="utf-8") as f:
            cfg.update(json.load(f).get("filters", {}))
    except FileNotFoundError:
        pass
    return cfg


CONFIG = load_config()


def _score(r) -> float:
    v = r.get("score")
    try:
        v = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return v


def group_std(group) -> float:
    scores = [_score(r) for r in group]
    scores = [s for s in scores if not math.isnan(s)]
    if len(scores) < 2:
        return 0.0
    mean = sum(scores) / len(scores)
    return math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))


def keep_group(group, config=None) -> bool:
    cfg = config or CONFIG
    group = [r for r in group if keep_trajectory(r, cfg)]
    if len(group) < 2:
        return False
    std = group_std(group)
    if cfg["drop_zero_variance_groups"] and std == 0.0:
        return False
    return std >= float(cfg["min_group_std"])


def keep_trajectory(rollout, config=None) -> bool:
    cfg = config or CONFIG
    if math.isnan(_score(rollout)):
        return False
    response = rollout.get("response") or ""
    extra = rollout.get("extra_info") or {}
    if cfg["drop_truncated"] and (extra.get("truncated") or len(response) > int(cfg["max_response_chars"])):
        return False
    turns = rollout.get("turns")
    if isinstance(turns, (int, float)):
        if cfg.get("min_turns") is not None and turns < cfg["min_turns"]:
            return False
        if cfg.get("max_turns") is not None and turns > cfg["max_turns"]:
            return False
    return True

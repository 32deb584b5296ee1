"""SWE reward in verl's ``compute_score`` signature, with a TRL adapter.

    compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict

``solution_str`` is the agent's patch (a unified diff, or a final answer holding one in a
```diff block). ``ground_truth`` is the task as JSON (or a dict): ``instance_id``,
``base_commit``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, optional ``test_patch``, and ``repo``:
a local git repository, or a name looked up under ``env/config.json``'s ``reward.repos_dir``
("owner/name" -> ``<repos_dir>/owner__name``). ``extra_info["report_dir"]``, when given,
receives ``<instance_id>/report.json`` in SWE-bench's shape.

Components: acc (resolved), patch_applied, f2p_pass_rate, p2p_pass_rate, touched_tests,
framework_tampering, no_patch; ``score`` = acc unless ``reward.f2p_credit_weight`` > 0.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from swe_eval import evaluate, extract_patch, write_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_CONFIG_FILE = os.path.join(os.path.dirname(HERE), "env", "config.json")
_DEFAULTS = {"f2p_credit_weight": 0.0, "repos_dir": "repos", "reject_test_edits": True, "reject_framework_tampering": True}


def load_config(path: str = _CONFIG_FILE) -> dict:
    cfg = dict(_DEFAULTS)
    try:
        with open(path, encoding="utf-8") as f:
            cfg.update(json.load(f).get("reward", {}))
    except FileNotFoundError:
        pass
    return cfg


CONFIG = load_config()


def _task(ground_truth, cfg):
    task = json.loads(ground_truth) if isinstance(ground_truth, (str, bytes)) else dict(ground_truth)
    for k in ("instance_id", "base_commit", "repo"):
        if not task.get(k):
            raise ValueError("ground_truth lacks %r; a task needs instance_id, repo, base_commit, FAIL_TO_PASS, PASS_TO_PASS" % k)
    repo = str(task["repo"])
    if not os.path.isdir(repo):
        root = cfg["repos_dir"]
        if not os.path.isabs(root):
            root = os.path.join(os.path.dirname(HERE), root)
        task["repo"] = os.path.join(root, repo.replace("/", "__"))
    return task


def compute_score(data_source, solution_str, ground_truth, extra_info=None, config=None):
    cfg = config or CONFIG
    task = _task(ground_truth, cfg)
    patch = extract_patch(solution_str)
    report = evaluate(task, patch, bool(cfg["reject_test_edits"]), bool(cfg["reject_framework_tampering"]))
    rep = report[str(task["instance_id"])]
    details = report["evotrainer"]
    if extra_info and extra_info.get("report_dir"):
        write_report(report, os.path.join(str(extra_info["report_dir"]), str(task["instance_id"]), "report.json"))
    ts = rep["tests_status"]

    def rate(key):
        n = len(ts[key]["success"]) + len(ts[key]["failure"])
        return len(ts[key]["success"]) / n if n else 1.0

    acc = 1.0 if rep["resolved"] else 0.0
    honest = not (cfg["reject_test_edits"] and details["touched_tests"]) and not (cfg["reject_framework_tampering"] and details["framework_tampering"])
    f2p = rate("FAIL_TO_PASS") if rep["patch_successfully_applied"] and honest else 0.0
    w = float(cfg["f2p_credit_weight"])
    return {
        "score": (1.0 - w) * acc + w * f2p * rate("PASS_TO_PASS"),
        "acc": acc,
        "patch_applied": 1.0 if rep["patch_successfully_applied"] else 0.0,
        "f2p_pass_rate": f2p,
        "p2p_pass_rate": rate("PASS_TO_PASS") if rep["patch_successfully_applied"] else 0.0,
        "touched_tests": 1.0 if details["touched_tests"] else 0.0,
        "framework_tampering": 1.0 if details["framework_tampering"] else 0.0,
        "no_patch": 0.0 if rep["patch_exists"] else 1.0,
    }


def reward_func(prompts, completions, **kwargs):
    """TRL reward function (dataset column ``ground_truth`` holds the task JSON)."""
    truths = kwargs.get("ground_truth") or [None] * len(completions)
    out = []
    for comp, gt in zip(completions, truths):
        text = comp if isinstance(comp, str) else (comp[-1].get("content", "") if isinstance(comp, list) and comp else "")
        out.append(None if gt is None else float(compute_score("swe", text, gt)["score"]))
    return out

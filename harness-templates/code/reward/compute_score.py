"""Competitive-programming reward in verl's ``compute_score`` signature, with a TRL adapter.

    compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict

``ground_truth`` holds the tests: a JSON string or dict ``{"inputs": [...], "outputs": [...]}``
(the APPS/TACO ``input_output`` form), or a list of ``{"input", "output"}``. The program is
the last fenced Python block of the response (or the whole response when
``env/config.json`` says ``reward.require_code_block: false``).

Components (verl logs them as reward extras; ``evotrainer import`` reads them back):
  acc         1.0 when every test passes (AC), else 0.0
  partial     share of tests passed (0 when the program tampered with the checker)
  format      1.0 when the response has a fenced code block
  compile_error, runtime_error, timeout, memory_exceeded, wrong_answer, tampered   0/1 flags
  verdict     AC, WA, TLE, MLE, RE or CE (text)

``score`` = ``acc`` unless ``reward.partial_credit_weight`` > 0, then
``(1 - w) * acc + w * partial``. A program that tampers never earns credit.
"""
from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sandbox import HERE, isolation, judge  # noqa: E402

_CONFIG_FILE = os.path.join(os.path.dirname(HERE), "env", "config.json")
_DEFAULTS = {"partial_credit_weight": 0.0, "time_limit_s": 2.0, "memory_mb": 256, "float_tolerance": 0.0,
             "require_code_block": True, "max_tests": 50, "stop_on_first_failure": False}
_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.S | re.I)


def load_config(path: str = _CONFIG_FILE) -> dict:
    cfg = dict(_DEFAULTS)
    try:
        with open(path, encoding="utf-8") as f:
            cfg.update(json.load(f).get("reward", {}))
    except FileNotFoundError:
        pass
    return cfg


CONFIG = load_config()


def extract_code(text, require_block=True):
    """The last fenced code block (```python ... ```), or None."""
    if not isinstance(text, str):
        return None
    blocks = _BLOCK.findall(text)
    if blocks:
        return blocks[-1]
    return None if require_block else text


def parse_tests(ground_truth):
    gt = ground_truth
    if isinstance(gt, (bytes, bytearray)):
        gt = gt.decode("utf-8")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except ValueError as e:
            raise ValueError("ground_truth is not JSON tests (%s); expected {\"inputs\": [...], \"outputs\": [...]}" % e)
    if isinstance(gt, dict) and "input_output" in gt:
        return parse_tests(gt["input_output"])
    if isinstance(gt, dict) and "inputs" in gt and "outputs" in gt:
        if len(gt["inputs"]) != len(gt["outputs"]):
            raise ValueError("ground_truth has %d inputs but %d outputs" % (len(gt["inputs"]), len(gt["outputs"])))
        return [{"input": _s(i), "output": _s(o)} for i, o in zip(gt["inputs"], gt["outputs"])]
    if isinstance(gt, list) and all(isinstance(t, dict) and "input" in t and "output" in t for t in gt):
        return [{"input": _s(t["input"]), "output": _s(t["output"])} for t in gt]
    raise ValueError("ground_truth: expected {\"inputs\": [...], \"outputs\": [...]} or [{\"input\", \"output\"}], got %s" % type(gt).__name__)


def _s(x):
    if isinstance(x, list):
        return "\n".join(str(v) for v in x)
    return "" if x is None else str(x)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, config=None):
    cfg = config or CONFIG
    tests = parse_tests(ground_truth)[: int(cfg["max_tests"])]
    code = extract_code(solution_str, bool(cfg["require_code_block"]))
    has_block = extract_code(solution_str, True) is not None
    res = judge(code, tests, float(cfg["time_limit_s"]), int(cfg["memory_mb"]), float(cfg["float_tolerance"]),
                bool(cfg["stop_on_first_failure"]))
    v = res["verdict"]
    acc = 1.0 if v == "AC" and not res["tampered"] else 0.0
    partial = 0.0 if res["tampered"] or not res["total"] else res["passed"] / res["total"]
    w = float(cfg["partial_credit_weight"])
    return {
        "score": (1.0 - w) * acc + w * partial,
        "acc": acc,
        "partial": partial,
        "format": 1.0 if has_block else 0.0,
        "compile_error": 1.0 if v == "CE" else 0.0,
        "runtime_error": 1.0 if v == "RE" else 0.0,
        "timeout": 1.0 if v == "TLE" else 0.0,
        "memory_exceeded": 1.0 if v == "MLE" else 0.0,
        "wrong_answer": 1.0 if v == "WA" else 0.0,
        "tampered": 1.0 if res["tampered"] else 0.0,
        "verdict": v,
    }


def _text(x):
    if isinstance(x, str):
        return x
    if isinstance(x, list) and x and isinstance(x[-1], dict):
        return str(x[-1].get("content", ""))
    return "" if x is None else str(x)


def reward_func(prompts, completions, **kwargs):
    """TRL reward function (dataset column ``ground_truth`` or ``tests`` holds the tests)."""
    truths = kwargs.get("ground_truth") or kwargs.get("tests") or [None] * len(completions)
    out = []
    for comp, gt in zip(completions, truths):
        out.append(None if gt is None else float(compute_score("code", _text(comp), gt)["score"]))
    return out


if __name__ == "__main__":
    print(json.dumps(isolation(), indent=2))

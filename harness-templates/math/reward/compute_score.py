"""Math reward in verl's ``compute_score`` signature, with a TRL adapter.

    compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict

``score`` is the training reward; the other keys are its components, logged by verl as
reward extras and read back by ``evotrainer import``:
  acc        1.0 when the extracted answer is equivalent to the ground truth (binary correctness)
  format     1.0 when the answer is given in a recognized final-answer form (\\boxed, tag, "A:")
  no_answer  1.0 when no final answer could be extracted (a stray last number does not count
             unless last_number_fallback is on)
  pred       the extracted answer (text)
  verifier   which equivalence checker decided (text): "math_verify" when that package is
             importable (verl and TRL environments ship it), else "sympy" when importable,
             else "stdlib" (the template's own checks, which stand alone)

Correctness and format are kept apart so that a shaped reward rising while binary
correctness stays flat is visible (rule R4, reward hacking). Switches live in
``env/config.json`` (format_weight, last_number_fallback, max_response_chars).
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from math_grader import extract_answer, ground_truth_answer, is_equiv, verifier  # noqa: E402

_CONFIG_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "env", "config.json")
_DEFAULTS = {"format_weight": 0.0, "last_number_fallback": False, "max_response_chars": 200000}


def load_config(path: str = _CONFIG_FILE) -> dict:
    cfg = dict(_DEFAULTS)
    try:
        with open(path, encoding="utf-8") as f:
            cfg.update(json.load(f).get("reward", {}))
    except FileNotFoundError:
        pass
    return cfg


CONFIG = load_config()


def compute_score(data_source, solution_str, ground_truth, extra_info=None, config=None):
    cfg = config or CONFIG
    text = solution_str if isinstance(solution_str, str) else ("" if solution_str is None else str(solution_str))
    if len(text) > cfg["max_response_chars"]:
        text = text[-cfg["max_response_chars"]:]  # the final answer is at the end
    pred, method = extract_answer(text)
    formatted = method in ("boxed", "tag", "answer_line")
    graded = formatted or (method == "last_number" and cfg["last_number_fallback"])
    truth = ground_truth_answer(ground_truth)
    acc = 1.0 if graded and is_equiv(pred, truth) else 0.0
    fmt = 1.0 if formatted else 0.0
    w = float(cfg["format_weight"])
    score = (1.0 - w) * acc + w * fmt
    return {
        "score": score,
        "acc": acc,
        "format": fmt,
        "no_answer": 0.0 if graded else 1.0,
        "pred": "" if pred is None else pred,
        "verifier": verifier(),
    }


def _text(x) -> str:
    """A TRL completion: a string, or a conversation (list of {role, content})."""
    if isinstance(x, str):
        return x
    if isinstance(x, list) and x and isinstance(x[-1], dict):
        return str(x[-1].get("content", ""))
    return "" if x is None else str(x)


def reward_func(prompts, completions, **kwargs):
    """TRL reward function: ``GRPOTrainer(reward_funcs=[reward_func])``.

    Needs a dataset column ``ground_truth`` (or ``answer``); ``data_source`` is optional.
    Returns one float per completion, or None where there is no ground truth.
    """
    truths = kwargs.get("ground_truth") or kwargs.get("answer") or [None] * len(completions)
    sources = kwargs.get("data_source") or ["math"] * len(completions)
    out = []
    for comp, gt, src in zip(completions, truths, sources):
        if gt is None:
            out.append(None)
            continue
        out.append(float(compute_score(src, _text(comp), gt)["score"]))
    return out

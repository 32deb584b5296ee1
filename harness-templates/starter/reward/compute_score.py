"""Reward for math answers, in verl's `compute_score` signature.

Correctness is kept separate from format so that diagnostics can tell a shaped reward
rising from correctness rising (rule R4, reward hacking).
"""
import re

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def extract_answer(text):
    """The final answer: an `A: ...` line, a \\boxed{...}, or else the last number."""
    m = re.search(r"^A:\s*(.+)$", text, re.MULTILINE)
    if m:
        found = _NUMBER.findall(m.group(1))
        return found[-1].replace(",", "") if found else m.group(1).strip()
    m = re.search(r"\\boxed\{([^{}]*)\}", text)
    if m:
        return m.group(1).strip().replace(",", "")
    found = _NUMBER.findall(text)
    return found[-1].replace(",", "") if found else None


def _same(a, b):
    try:
        return abs(float(a) - float(b)) < 1e-6
    except (TypeError, ValueError):
        return a is not None and b is not None and a.strip() == b.strip()


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    pred = extract_answer(solution_str)
    truth = extract_answer(ground_truth) or ground_truth
    correct = _same(pred, truth)
    return {
        "score": 1.0 if correct else 0.0,
        "acc": correct,
        "pred": pred,
        "format": 1.0 if pred is not None else 0.0,
    }

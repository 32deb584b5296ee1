"""Measures reward/math_grader.is_equiv on an answer-equivalence case file, with the standard library
alone and with sympy (when importable), and prints the counts and the balanced accuracy.

    python3 tools/measure_equivalence.py CASES.json [--mode both|stdlib|sympy] [--misses] [--json]

Two case formats are read:

- ``{"cases": [{"a": ..., "b": ..., "equiv": true|false}]}`` (the suites under
  test/fixtures/templates/math-equivalence), scored as they are; a case with an ``"out_of_scope"``
  reason is counted under that reason and not scored;
- ``{"source": {...}, "cases": [{"student": ..., "teacher": ..., "mark": 1|0|-1|-3}]}``: rows of a
  STACK answer-test results page (Maxima syntax; mark 1 = equivalent, 0 = not, -1 = an error case,
  -3 = a known STACK failure). Only the notation is translated (``%pi`` -> ``\\pi``, ``{...}`` ->
  ``\\{...\\}``, ``matrix([..],[..])`` -> ``pmatrix``, ``oo(a,b)`` -> ``(a, b)``...); the verdict is
  always STACK's. Rows whose verdict is not about mathematical equivalence (CAS commands, calculus
  and sum nouns, function definitions, propositional logic, strings, units, Maxima atom naming) are
  counted as out of scope, each with its reason, and never scored.

STACK's pages are GPL-licensed: keep such case files outside this project and pass their path.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Out-of-scope rules, first match wins: (reason, pattern over the Maxima text of either side).
def _words(alternatives):
    return r"(?<![A-Za-z_%])(?:" + alternatives + r")(?![A-Za-z_])"


OUT_OF_SCOPE = [
    ("calculus and sum nouns (diff, taylor, sum, product)",
     re.compile(_words("diff|noundiff|taylor|integrate|sum|product"))),
    ("CAS command evaluated by Maxima, not a written answer",
     re.compile(_words("integerp|lowesttermsp|exdowncase|assume|declare|trigrat|trigeval|rectform|polarform|ev|radcan|ratsimp|"
                         "round|significantfigures|scientific_notation|displaysci|makelist|natural_domain|"
                         "single_variable_solver_real|boolean_form|stackeq|stackvector|disp_complex|ntuple"))),
    ("units (stackunits)", re.compile(_words("stackunits"))),
    ("function definition (:=)", re.compile(r":=")),
    ("string", re.compile(r'"')),
    ("propositional logic and solution-set constants (true, false, all, none, not, implies, xor)",
     re.compile(_words("true|false|all|none|not|implies|xor|xnor|nounnot")
                + r"|\b[A-Z]\s+(?:and|or)\s+[A-Z]\b|^\s*\{?\s*[A-Z]\s+(?:and|or)\b")),
    ("Maxima atom naming (x1, x_1 and x[1] are distinct names in STACK)",
     re.compile(r"^\s*[A-Za-z]+(?:\d+|_\d+|\[\d+\])\s*$")),
]
MARK_REASONS = {-1: "STACK error case (invalid input, no verdict)", -3: "STACK known failure (no settled verdict)"}


def _args_at(s, i):
    """Top-level comma-separated arguments of the parenthesised group opening at s[i]; (args, end)."""
    depth, cur, args = 0, "", []
    for j in range(i, len(s)):
        ch = s[j]
        if ch in "([{":
            depth += 1
            if depth == 1:
                continue
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, j + 1
        elif ch == "," and depth == 1:
            args.append(cur)
            cur = ""
            continue
        cur += ch
    raise ValueError("unbalanced parentheses in %r" % s)


def _rewrite_calls(s, name, fmt):
    out, i = "", 0
    pat = re.compile(r"(?<![A-Za-z_%])" + re.escape(name) + r"\(")
    while True:
        m = pat.search(s, i)
        if not m:
            return out + s[i:]
        args, end = _args_at(s, m.end() - 1)
        out += s[i:m.start()] + fmt([_notation(a) for a in args])
        i = end


def _lists_to_tuples(s):
    """``[a,b]`` (a Maxima list) -> ``(a,b)``; ``A[1]`` (a subscript) -> ``A_{1}``."""
    out, stack = "", []
    for ch in s:
        if ch == "[":
            stack.append(bool(out) and (out[-1].isalnum() or out[-1] == "_"))
            out += "_{" if stack[-1] else "("
        elif ch == "]" and stack:
            out += "}" if stack.pop() else ")"
        else:
            out += ch
    return out


def maxima_to_latex(s):
    """Notation only: Maxima/STACK input syntax -> the LaTeX-ish text a model would write."""
    return _notation(s.strip().replace("{", "\\{").replace("}", "\\}"))  # Maxima braces are sets


def _notation(s):
    """maxima_to_latex after the set braces are escaped (the arguments of rewritten calls come here again)."""
    s = re.sub(r"\bnounand\b", "and", s)
    s = re.sub(r"\bnounor\b", "or", s)
    s = s.replace("#pm#", "\\pm ")
    s = re.sub(r"#", "\\\\ne ", s)
    s = re.sub(r"%pi\b", "\\\\pi ", s)
    s = re.sub(r"%e\b", "e", s)
    s = re.sub(r"%i\b", "i", s)
    s = re.sub(r"(?<![A-Za-z_])minf(?![A-Za-z_])", "-\\\\infty ", s)
    s = re.sub(r"(?<![A-Za-z_])inf(?![A-Za-z_])", "\\\\infty ", s)
    s = re.sub(r"(?<![A-Za-z_])cosech(?=\()", "csch", s)
    s = re.sub(r"(?<![A-Za-z_])cosec(?=\()", "csc", s)
    s = re.sub(r"(?<![A-Za-z_])binomial(?=\()", "binom", s)
    s = _rewrite_calls(s, "matrix", lambda rows: "\\begin{pmatrix}" + " \\\\ ".join(
        " & ".join(x.strip() for x in _args_at(r.strip(), 0)[0]) for r in rows) + "\\end{pmatrix}")
    s = _rewrite_calls(s, "lg", lambda a: "\\log_{%s}(%s)" % (a[1].strip(), a[0]) if len(a) == 2 else "\\log_{10}(%s)" % a[0])
    s = _rewrite_calls(s, "%union", lambda a: " \\cup ".join(x.strip() for x in a))
    s = _rewrite_calls(s, "%intersection", lambda a: " \\cap ".join(x.strip() for x in a))
    for name, (lo, hi) in {"oo": "()", "oc": "(]", "co": "[)", "cc": "[]"}.items():
        s = _rewrite_calls(s, name, lambda a, lo=lo, hi=hi: "\\left%s%s, %s\\right%s" % (lo, a[0].strip(), a[1].strip(), hi))
    s = re.sub(r"\\left\[", "\\\\left<LB>", s)
    s = re.sub(r"\\right\]", "\\\\right<RB>", s)
    s = _lists_to_tuples(s)
    s = s.replace("<LB>", "[").replace("<RB>", "]")
    return re.sub(r"\s+", " ", s).strip()


def load_cases(path):
    """(scored cases as dicts a/b/equiv, out-of-scope counts by reason, source description)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise SystemExit("%s: expected a JSON object with a \"cases\" list" % path)
    scored, skipped = [], {}
    for n, c in enumerate(doc["cases"]):
        if "equiv" in c:
            if c.get("out_of_scope"):
                skipped[c["out_of_scope"]] = skipped.get(c["out_of_scope"], 0) + 1
                continue
            scored.append({"a": c["a"], "b": c["b"], "equiv": bool(c["equiv"]), "raw": [c["a"], c["b"]]})
            continue
        if not {"student", "teacher", "mark"} <= set(c):
            raise SystemExit("%s: case %d has neither a/b/equiv nor student/teacher/mark: %r" % (path, n, c))
        reason = MARK_REASONS.get(c["mark"])
        if reason is None and c["mark"] not in (0, 1):
            raise SystemExit("%s: case %d has mark %r; expected 1, 0, -1 or -3" % (path, n, c["mark"]))
        if reason is None:
            for why, pat in OUT_OF_SCOPE:
                if pat.search(c["student"]) or pat.search(c["teacher"]):
                    reason = why
                    break
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        try:
            a, b = maxima_to_latex(c["student"]), maxima_to_latex(c["teacher"])
        except ValueError as e:
            raise SystemExit("%s: case %d: %s" % (path, n, e))
        scored.append({"a": a, "b": b, "equiv": c["mark"] == 1, "raw": [c["student"], c["teacher"]]})
    src = doc.get("source") or {}
    desc = "%s %s @ %s" % (src.get("repository", ""), src.get("path", ""), src.get("commit", "")) if src else os.path.basename(path)
    return scored, skipped, desc.strip(), len(doc["cases"])


def measure(cases):
    sys.path.insert(0, os.path.join(ROOT, "reward"))
    from math_grader import is_equiv, verifier

    pos = [c for c in cases if c["equiv"]]
    neg = [c for c in cases if not c["equiv"]]
    wrong = []
    tp = tn = 0
    for c in cases:
        got = is_equiv(c["a"], c["b"])
        if got == c["equiv"]:
            tp += int(got)
            tn += int(not got)
        else:
            wrong.append({"a": c["a"], "b": c["b"], "equiv": c["equiv"], "raw": c["raw"]})
    rates = [x for x in ((tp / len(pos)) if pos else None, (tn / len(neg)) if neg else None) if x is not None]
    return {"verifier": verifier(), "pos": len(pos), "neg": len(neg), "tp": tp, "tn": tn,
            "balanced_accuracy": sum(rates) / len(rates) if rates else None, "wrong": wrong}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases", help="case file (JSON)")
    p.add_argument("--mode", choices=["both", "stdlib", "sympy"], default="both")
    p.add_argument("--misses", action="store_true", help="list the misjudged cases")
    p.add_argument("--json", action="store_true", help="print one JSON object per mode")
    args = p.parse_args(argv)
    if not os.path.isfile(args.cases):
        raise SystemExit("%s: no such file; pass the path of a case file (see the module docstring)" % args.cases)
    if args.mode == "both":
        rc = 0
        for mode in ("stdlib", "sympy"):
            cmd = [sys.executable, os.path.abspath(__file__), args.cases, "--mode", mode]
            cmd += ["--misses"] if args.misses else []
            cmd += ["--json"] if args.json else []
            rc = subprocess.call(cmd) or rc
        return rc
    if args.mode == "stdlib":  # as on a machine without them
        sys.modules["sympy"] = None
        sys.modules["math_verify"] = None
    else:
        sys.modules["math_verify"] = None  # sympy path: the template's own checks, then sympy
    cases, skipped, desc, total = load_cases(args.cases)
    res = measure(cases)
    if args.mode == "sympy" and res["verifier"] != "sympy":
        print("sympy is not importable here: the sympy path was not measured", file=sys.stderr)
        return 0
    res.update({"mode": args.mode, "source": desc, "rows": total, "out_of_scope": skipped})
    if args.json:
        if not args.misses:
            res.pop("wrong")
        print(json.dumps(res))
        return 0
    ba = res["balanced_accuracy"]
    print("%s: %d rows, %d scored, %d out of scope" % (desc, total, len(cases), sum(skipped.values())))
    for why, n in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print("  out of scope %3d  %s" % (n, why))
    print("  %-6s equivalent %d/%d, not equivalent %d/%d, balanced accuracy %s"
          % (args.mode, res["tp"], res["pos"], res["tn"], res["neg"], "%.3f" % ba if ba is not None else "n/a"))
    if args.misses:
        for w in res["wrong"]:
            print("    miss (expected %s): %r vs %r   [%s | %s]" % ("equiv" if w["equiv"] else "differ", w["a"], w["b"], w["raw"][0], w["raw"][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Answer extraction and answer equivalence for math rewards (Python 3.9+, standard library).

Extraction, in order of precedence (the last occurrence of the first kind found wins):
  1. ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces kept whole),
  2. final-answer tags: ``<answer>...</answer>``, ``#### 42`` (GSM8K), "The final answer is ...",
     "Final answer: ...",
  3. an ``A: ...`` / ``Answer: ...`` line,
  4. the last number in the text (reported with ``method == "last_number"``; it does not
     satisfy the format component).

Equivalence: normalized strings (LaTeX spacing, ``\\left``/``\\right``, ``\\dfrac``/``\\tfrac``,
``\\text{units}``, dollars, degrees), numbers (thousands separators, decimals, fractions,
``\\frac{a}{b}``, percentages, scientific notation), ordered tuples, exact arithmetic on simple
expressions, a polynomial-identity check on expressions with variables (random points, exact
rational arithmetic), and sympy's simplification when sympy is importable.
"""
from __future__ import annotations

import ast
import math
import random
import re
from fractions import Fraction
from typing import Optional, Tuple

MAX_ANSWER_CHARS = 400

# ----------------------------------------------------------------------------- extraction


def _last_braced(text: str, commands=("\\boxed", "\\fbox"), max_tries: int = 16, max_span: int = 20000) -> Optional[str]:
    """Content of the last ``\\boxed{...}`` with balanced braces (or ``\\boxed 5``).

    Bounded work on hostile text: at most ``max_tries`` candidates per command, each scanned
    for at most ``max_span`` characters.
    """
    best = None
    best_at = -1
    for cmd in commands:
        at = text.rfind(cmd)
        tries = 0
        while at != -1 and at > best_at and tries < max_tries:
            tries += 1
            rest = text[at + len(cmd):at + len(cmd) + max_span]
            if rest.startswith("{"):
                depth = 0
                for i, ch in enumerate(rest):
                    if ch == "{":
                        depth += 1
                    elif ch == "}":
                        depth -= 1
                        if depth == 0:
                            best, best_at = rest[1:i], at
                            break
                else:  # unbalanced: try an earlier one
                    at = text.rfind(cmd, 0, at)
                    continue
                break
            m = re.match(r"\s+([^\s$]+)", rest)
            if m:
                best, best_at = m.group(1), at
                break
            at = text.rfind(cmd, 0, at)
    return best


_TAGS = [
    re.compile(r"<answer>\s*(.*?)\s*</answer>", re.S | re.I),
    re.compile(r"####\s*([^\n]+)"),
    re.compile(r"final answer is[:\s]*([^\n]+)", re.I),
    re.compile(r"final answer\s*:\s*([^\n]+)", re.I),
]
_ANSWER_LINE = re.compile(r"^[ \t]*(?:A|Answer)\s*:[ \t]*(.+?)[ \t]*$", re.M)
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?|-?\.\d+")


def _clean_tail(ans: str) -> str:
    ans = ans.strip()
    # "The final answer is $42$. I hope it is correct." -> "42"
    if ans.startswith("$"):
        end = ans.find("$", 1)
        if end > 0:
            ans = ans[1:end]
    ans = re.sub(r"\s*I hope it is correct\.?$", "", ans, flags=re.I)
    ans = ans.rstrip(" .")
    return ans.strip()


def extract_answer(text: Optional[str]) -> Tuple[Optional[str], str]:
    """Returns ``(answer, method)``; method is boxed, tag, answer_line, last_number or none."""
    if not text:
        return None, "none"
    boxed = _last_braced(text)
    if boxed is not None and boxed.strip():
        return boxed.strip()[:MAX_ANSWER_CHARS], "boxed"
    tagged = None
    tagged_at = -1
    for rx in _TAGS:
        for m in rx.finditer(text):
            if m.start() >= tagged_at and m.group(1).strip():
                tagged, tagged_at = m.group(1), m.start()
    if tagged is not None:
        inner = _last_braced(tagged)
        return _clean_tail(inner if inner is not None else tagged)[:MAX_ANSWER_CHARS], "tag"
    lines = _ANSWER_LINE.findall(text)
    if lines:
        return _clean_tail(lines[-1])[:MAX_ANSWER_CHARS], "answer_line"
    nums = _NUMBER.findall(text)
    if nums:
        return nums[-1], "last_number"
    return None, "none"


def ground_truth_answer(ground_truth) -> str:
    """A ground truth may be a bare answer or a worked solution ending in ``#### x`` / ``A: x``."""
    gt = str(ground_truth)
    if "\n" in gt or "####" in gt or _ANSWER_LINE.search(gt) or "\\boxed" in gt:
        ans, method = extract_answer(gt)
        if ans is not None and method != "last_number":
            return ans
    return gt.strip()


# ----------------------------------------------------------------------------- normalization


def _fix_fracs(s: str) -> str:
    """``\\frac34`` -> ``\\frac{3}{4}``, ``\\frac3{4}`` -> ``\\frac{3}{4}``."""
    out = []
    parts = s.split("\\frac")
    out.append(parts[0])
    for part in parts[1:]:
        out.append("\\frac")
        if part.startswith("{"):
            out.append(part)
            continue
        if len(part) < 2:
            out.append(part)
            continue
        a = part[0]
        if part[1] == "{":
            out.append("{" + a + "}" + part[1:])
        else:
            out.append("{" + a + "}{" + part[1] + "}" + part[2:])
    return "".join(out)


def _fix_sqrt(s: str) -> str:
    return re.sub(r"\\sqrt\s*([^\s{\\])", r"\\sqrt{\1}", s)


_UNIT_WORDS = r"(?:units?|cm|m|km|mm|kg|g|mg|lb|lbs|pounds?|feet|foot|ft|inch(?:es)?|in|miles?|mph|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|dollars?|cents?|degrees?|meters?|liters?|l|ml|sq|square|cubic|people|students?|apples?|marbles?|cookies?|eggs?|books?|pages?|points?|times|percent|each|per|total)"


def normalize(ans: str) -> str:
    s = str(ans).strip()
    s = s.replace("\n", " ")
    s = s.replace("\\\\", "\\")
    s = re.sub(r"\\[!,;:> ]", "", s)
    s = s.replace("\\quad", "").replace("\\qquad", "")
    s = re.sub(r"\\(?:d|t)frac", r"\\frac", s)
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("\\{", "{").replace("\\}", "}") if s.startswith("\\{") else s
    s = re.sub(r"\^\s*\{?\\circ\}?", "", s)
    s = s.replace("°", "")
    s = s.replace("\\$", "").replace("$", "")
    s = s.replace("\\%", "%")
    # \text{ units} / \mbox{...} / \mathrm{...}: keep the words, then drop trailing units
    s = re.sub(r"\\(?:text|textbf|mbox|mathrm|textrm)\s*\{([^{}]*)\}", r" \1 ", s)
    s = s.strip()
    m = re.match(r"^(.*?\d)\s*(?:" + _UNIT_WORDS + r")(?:\s*(?:\^?\d|/\s*\w+|" + _UNIT_WORDS + r"))*\s*\.?$", s, re.I)
    if m and re.search(r"\d", m.group(1)):
        s = m.group(1)
    # "x = 5" -> "5" (a single short variable on the left)
    if s.count("=") == 1:
        lhs, rhs = s.split("=")
        if len(lhs.strip()) <= 2 and re.fullmatch(r"[A-Za-z]\w?", lhs.strip() or "?"):
            s = rhs
    s = _fix_sqrt(s)
    s = s.replace(" ", "")
    s = _fix_fracs(s)
    if s.endswith("."):
        s = s[:-1]
    s = re.sub(r"(^|[^\d])\.(\d)", r"\g<1>0.\2", s)
    m = re.fullmatch(r"(-?\d+)/(\d+)", s)
    if m:
        s = "\\frac{%s}{%s}" % (m.group(1), m.group(2))
    return s


# ----------------------------------------------------------------------------- numbers


def parse_number(s: str) -> Optional[Fraction]:
    """An exact value for a plain number: ``1,234.5``, ``-3``, ``3/4``, ``\\frac{3}{4}``, ``1e3``, ``25%``."""
    t = s.strip().replace(" ", "")
    pct = False
    if t.endswith("%"):
        pct, t = True, t[:-1]
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    m = re.fullmatch(r"([+-]?)\\frac\{([+-]?[\d.]+)\}\{([+-]?[\d.]+)\}", t)
    try:
        if m:
            v = Fraction(m.group(2)) / Fraction(m.group(3))
            v = -v if m.group(1) == "-" else v
        elif re.fullmatch(r"[+-]?\d+/\d+", t):
            v = Fraction(t)
        elif re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", t):
            v = Fraction(t)
        else:
            return None
    except (ValueError, ZeroDivisionError):
        return None
    return v / 100 if pct else v


# ----------------------------------------------------------------------------- expressions

_ALLOWED_FUNCS = {"sqrt": math.sqrt}


_FUNCTIONS = {"\\sin": "sin", "\\cos": "cos", "\\tan": "tan", "\\ln": "log", "\\log": "log", "\\exp": "exp"}


def latex_to_python(s: str, functions: bool = False) -> str:
    """Simple LaTeX/plain math to a Python expression string (raises ValueError when unsure).

    With ``functions``, ``\\sin``, ``\\cos``, ``\\tan``, ``\\ln``, ``\\log``, ``\\exp`` become calls (for sympy).
    """
    t = s
    if functions:
        for k, v in _FUNCTIONS.items():
            t = t.replace(k, " " + v)
    for _ in range(10):
        n = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"((\1)/(\2))", t)
        n = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", n)
        if n == t:
            break
        t = n
    t = t.replace("\\cdot", "*").replace("\\times", "*").replace("\\div", "/").replace("\\pi", "(pi)")
    t = t.replace("{", "(").replace("}", ")").replace("^", "**")
    if "\\" in t or re.search(r"[=<>\[\],;]", t):
        raise ValueError("not a simple expression")
    t = re.sub(r"(\d)\s*([A-Za-z(])", r"\1*\2", t)           # 2x, 2(
    t = re.sub(r"\)\s*([A-Za-z0-9(])", r")*\1", t)            # )(, )x
    t = re.sub(r"\b([a-zA-Z])\s*\(", r"\1*(", t)                  # x(
    t = re.sub(r"\b([a-z])([a-z])\b", lambda m: m.group(0) if m.group(0) == "pi" else m.group(1) + "*" + m.group(2), t)  # xy -> x*y
    t = re.sub(r"\b(sqrt|sin|cos|tan|log|exp)\s*\*\s*\(", r"\1(", t)
    return t


def _eval(node, env):
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value)
    if isinstance(node, ast.Name):
        if node.id == "pi":
            return math.pi
        if node.id in env:
            return env[node.id]
        raise ValueError("unknown name")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Pow):
            if isinstance(b, Fraction) and b.denominator == 1 and abs(b) <= 64:
                return a ** int(b)
            if abs(float(b)) > 64:
                raise ValueError("exponent too large")
            return float(a) ** float(b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ALLOWED_FUNCS and len(node.args) == 1:
        v = float(_eval(node.args[0], env))
        if v < 0:
            raise ValueError("sqrt of a negative number")
        r = math.isqrt(int(v)) if v == int(v) else None
        if r is not None and r * r == v:
            return Fraction(r)
        return math.sqrt(v)
    raise ValueError("unsupported expression")


def _close(a, b) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    fa, fb = float(a), float(b)
    return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)


def expressions_equal(a: str, b: str) -> Optional[bool]:
    """Exact arithmetic, or polynomial identity at random points when variables appear; None if unsure."""
    if len(a) > MAX_ANSWER_CHARS or len(b) > MAX_ANSWER_CHARS:
        return None
    try:
        ea = ast.parse(latex_to_python(a), mode="eval")
        eb = ast.parse(latex_to_python(b), mode="eval")
    except (ValueError, SyntaxError):
        return None
    names = sorted({n.id for e in (ea, eb) for n in ast.walk(e) if isinstance(n, ast.Name) and n.id not in ("pi", "sqrt")})
    if len(names) > 4:
        return None
    rng = random.Random(12345)
    trials = 1 if not names else 6
    try:
        for _ in range(trials):
            env = {n: Fraction(rng.randint(-97, 97), rng.randint(1, 13)) for n in names}
            va, vb = _eval(ea, env), _eval(eb, env)
            if not _close(va, vb):
                return False
        return True
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None


_HUGE_POWER = re.compile(r"(\^|\*\*)\s*[({]?\s*-?\d{3,}")


def _safe_for_sympy(expr: str) -> bool:
    """Refuses what sympy could spend unbounded time on: long input, big exponents,
    power towers (``2^2^2``, ``2^{3^4}``), many powers or factorials."""
    if len(expr) > 200 or _HUGE_POWER.search(expr) or expr.count("^") > 4 or "!" in expr:
        return False
    for m in re.finditer(r"\^", expr):
        rest = expr[m.end():].lstrip()
        if rest.startswith("{") or rest.startswith("("):
            depth, end = 0, len(rest)
            for i, ch in enumerate(rest):
                if ch in "{(":
                    depth += 1
                elif ch in "})":
                    depth -= 1
                    if depth == 0:
                        end = i
                        break
            exponent, after = rest[1:end], rest[end + 1:]
        else:
            mm = re.match(r"-?[\w.]+", rest)
            exponent, after = (mm.group(0), rest[mm.end():]) if mm else (rest, "")
        if "^" in exponent or after.lstrip().startswith("^"):
            return False
    return True


def _sympy_equal(a: str, b: str) -> Optional[bool]:
    if not (_safe_for_sympy(a) and _safe_for_sympy(b)):
        return None  # sympy could expand it without bound: too slow inside a reward
    try:
        import sympy  # noqa: F401  (optional acceleration)
        from sympy.parsing.sympy_parser import parse_expr, standard_transformations, implicit_multiplication_application
    except Exception:  # sympy not installed: the stdlib checks decide
        return None
    try:
        tr = standard_transformations + (implicit_multiplication_application,)
        pa = parse_expr(latex_to_python(a, functions=True), transformations=tr, evaluate=True)
        pb = parse_expr(latex_to_python(b, functions=True), transformations=tr, evaluate=True)
        return bool(sympy.simplify(pa - pb) == 0)
    except Exception:
        return None


def _split_top(s: str):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def is_equiv(pred: Optional[str], truth: Optional[str]) -> bool:
    """Is the predicted answer equivalent to the ground-truth answer?"""
    if pred is None or truth is None:
        return False
    a, b = normalize(pred), normalize(truth)
    if not a or not b:
        return False
    if a == b:
        return True
    na, nb = parse_number(a), parse_number(b)
    if na is not None and nb is not None:
        if na == nb:
            return True
        # "25%" against "25": percentages also compare by their number
        if a.endswith("%") != b.endswith("%"):
            ra = parse_number(a.rstrip("%")) if a.endswith("%") else na
            rb = parse_number(b.rstrip("%")) if b.endswith("%") else nb
            return ra == rb
        return False
    # ordered tuples / lists: element by element (a thousands-separated number was handled above)
    pa, pb = _split_top(a.strip("()[]") if a[:1] in "([" else a), _split_top(b.strip("()[]") if b[:1] in "([" else b)
    if len(pa) > 1 or len(pb) > 1:
        if len(pa) != len(pb) or (a[:1] in "([") != (b[:1] in "(["):
            return False
        return all(is_equiv(x, y) for x, y in zip(pa, pb))
    if a.count("=") != b.count("="):
        return False
    if "=" in a:
        return False  # equations: only identical normal forms count
    r = expressions_equal(a, b)
    if r is not None:
        return r
    r = _sympy_equal(a, b)
    return bool(r)

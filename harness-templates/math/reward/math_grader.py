"""Answer extraction and answer equivalence for math rewards (Python 3.9+, standard library).

Extraction, in order of precedence (the last occurrence of the first kind found wins):
  1. ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces kept whole; boxes separated only by commas
     or "and" form one answer list),
  2. final-answer tags: ``<answer>...</answer>``, ``#### 42`` (GSM8K), "The final answer is ...",
     "Final answer: ...",
  3. an ``A: ...`` / ``Answer: ...`` line,
  4. the last number in the text (reported with ``method == "last_number"``; it does not
     satisfy the format component).

Equivalence (``is_equiv``): LaTeX normalized (fraction spellings, ``\\left``/``\\right``, spacing,
text wrappers, units, dollars, degrees, percent, ``var =`` prefixes), then compared by structure
(sets and answer lists without order; tuples, intervals and matrices in order; inequalities as
intervals; equations up to a constant factor, "or"-joined equations as one product equation; relations of
one variable as the sets of reals where they hold), numbers exactly, and expressions at random points
(exact on rationals). sympy, when importable, decides what those cannot, under a timer; math_verify,
when importable, is asked first. See the README's "Answer equivalence".
"""
from __future__ import annotations

import ast
import cmath
import math
import random
import re
import threading
import time
from fractions import Fraction
from typing import Optional, Tuple

MAX_ANSWER_CHARS = 400
MAX_NUMBER_CHARS = 4000  # a plain number (digits, a fraction bar) may be this long
_PLAIN_NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?\s*")

# ----------------------------------------------------------------------------- extraction


def _last_braced_at(text: str, commands=("\\boxed", "\\fbox"), max_tries: int = 16, max_span: int = 20000):
    """``(content, start, end)`` of the last ``\\boxed{...}`` with balanced braces (or ``\\boxed 5``);
    ``(None, -1, -1)`` when there is none.

    Bounded work on hostile text: at most ``max_tries`` candidates per command, each scanned
    for at most ``max_span`` characters.
    """
    best, best_at, best_end = None, -1, -1
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
                            best, best_at, best_end = rest[1:i], at, at + len(cmd) + i + 1
                            break
                else:  # unbalanced: try an earlier one
                    at = text.rfind(cmd, 0, at)
                    continue
                break
            m = re.match(r"\s+([^\s$]+)", rest)
            if m:
                best, best_at, best_end = m.group(1), at, at + len(cmd) + m.end()
                break
            at = text.rfind(cmd, 0, at)
    return best, best_at, best_end


def _last_braced(text: str) -> Optional[str]:
    return _last_braced_at(text)[0]


_BOX_SEPARATOR = re.compile(r"(?:\s|[,;$]|\\quad|\\qquad|\\[,;]|\\text\{\s*(?:and|or)\s*\}|\b(?:and|or)\b)*")


def _boxed_answer(text: str) -> Optional[str]:
    """The last ``\\boxed{}``, joined with the boxes just before it when only commas or "and" separate
    them (``\\boxed{2}, \\boxed{3}`` is the answer list ``2, 3``)."""
    got, at, _ = _last_braced_at(text)
    if got is None:
        return None
    parts = [got.strip()]
    for _ in range(15):
        prev, prev_at, prev_end = _last_braced_at(text[:at])
        if prev is None or not _BOX_SEPARATOR.fullmatch(text[prev_end:at]) or at - prev_end > 40:
            break
        parts.insert(0, prev.strip())
        at = prev_at
    if len(set(parts)) == 1:
        return parts[0]
    return ", ".join(parts)


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
    boxed = _boxed_answer(text)
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

_DOUBLE_ESCAPED = re.compile(r"\\\\(?=(?:frac|dfrac|tfrac|sqrt|begin|end|text|mathrm|pi|cdot|times|left|right|infty|le|ge|cup|in)\b|(?:frac|dfrac|tfrac)\d)")
_WRAPPERS = ("\\text", "\\textbf", "\\textit", "\\textrm", "\\textsf", "\\texttt", "\\textnormal", "\\emph", "\\mathrm", "\\mathbf",
             "\\mathit", "\\mathcal", "\\mathsf", "\\mathtt", "\\mbox", "\\operatorname", "\\boxed", "\\fbox")
_SHORT_UNITS = r"cm|mm|km|m|kg|mg|g|lb|lbs|ft|in|l|ml|hrs?|mins?|secs?|sq"
_LONG_UNITS = (r"units?|pounds?|feet|foot|inch(?:es)?|miles?|mph|hours?|minutes?|seconds?|days?|weeks?|months?|years?|dollars?|cents?"
               r"|degrees?|meters?|metres?|centimeters?|kilometers?|liters?|litres?|square|cubic|people|persons?|students?|apples?"
               r"|marbles?|cookies?|eggs?|books?|pages?|points?|times|each|per|total|radians?|inches")
_UNIT = r"(?:\s(?:" + _SHORT_UNITS + r")|(?:" + _LONG_UNITS + r"))(?![A-Za-z])"
_UNIT_MORE = r"\s*(?:\^\s*\{?\d\}?|/\s*[A-Za-z]+|(?:" + _SHORT_UNITS + r"|" + _LONG_UNITS + r")(?![A-Za-z]))"
_UNIT_TAIL = re.compile(r"^(.*?\d\}?)\s*" + _UNIT + r"(?:" + _UNIT_MORE + r")*\s*\.?$", re.I)


def _braced(s: str, i: int) -> Tuple[Optional[str], int]:
    """The balanced ``{...}`` group starting at ``s[i]``: (content, index after it), or (None, i)."""
    if i >= len(s) or s[i] != "{":
        return None, i
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
    return None, i


def _unwrap(s: str, commands) -> str:
    """``\\text{abc}`` -> ``abc`` for each command (nested braces kept whole)."""
    for cmd in commands:
        out, i = "", 0
        while True:
            j = s.find(cmd + "{", i)
            if j == -1:
                out += s[i:]
                break
            inner, end = _braced(s, j + len(cmd))
            if inner is None:
                out += s[i:]
                break
            out += s[i:j] + " " + inner + " "
            i = end
        s = out
    return s


def _fix_fracs(s: str) -> str:
    """``\\frac34`` -> ``\\frac{3}{4}``, ``\\frac3{4}`` -> ``\\frac{3}{4}``, ``\\frac{1}2`` -> ``\\frac{1}{2}``."""
    s = re.sub(r"\\frac\s*([0-9A-Za-z])\s*([0-9A-Za-z])", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\frac\s*([0-9A-Za-z])\s*\{", r"\\frac{\1}{", s)
    s = re.sub(r"\\frac\s*(\{[^{}]*\})\s*([0-9A-Za-z])", r"\\frac\1{\2}", s)
    return s


def _fix_sqrt(s: str) -> str:
    return re.sub(r"\\sqrt\s*([0-9A-Za-z])", r"\\sqrt{\1}", s)


def normalize(ans) -> str:
    """A canonical LaTeX-ish string: wrappers, spacing, units, dollars, degrees and ``var =`` prefixes removed."""
    s = str(ans).strip()
    if _DOUBLE_ESCAPED.search(s):
        s = s.replace("\\\\\\\\", "\\\\")
        s = _DOUBLE_ESCAPED.sub(r"\\", s)
    s = s.replace("\n", " ")
    for a, b in (("\\(", ""), ("\\)", ""), ("\\[", ""), ("\\]", ""), ("\\displaystyle", ""), ("\\textstyle", ""),
                 ("\\qquad", " "), ("\\quad", " "), ("\\dfrac", "\\frac"), ("\\tfrac", "\\frac"), ("\\dbinom", "\\binom"),
                 ("\\tbinom", "\\binom"), ("\\mp", "\\pm"), ("±", "\\pm"), ("{,}", ","), ("\\%", "%"), ("\\$", ""), ("$", ""), ("°", ""), ("\\degree", ""),
                 ("\\langle", "("), ("\\rangle", ")"), ("⟨", "("), ("⟩", ")"), ("≤", "\\le "), ("≥", "\\ge "), ("∞", "\\infty "), ("∪", "\\cup "), ("−", "-")):
        s = s.replace(a, b)
    s = re.sub(r"(?<=\d),\\!\s*(?=\d)", "", s)  # 56,\!017 and 11,\! 111: digits grouped with a negative space
    s = re.sub(r"(?<!\\)\\[!,;: ]", " ", s).replace("~", " ")
    s = re.sub(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)\s*(\\?[()\[\]{}|.])", lambda m: "" if m.group(1) == "." else m.group(1), s)
    # degrees: dropped from an angle (90^\\circ is 90), radians inside a trigonometric function
    if re.search(r"\\(?:sin|cos|tan|sec|csc|cot)(?![a-z])", s):
        s = re.sub(r"([0-9A-Za-z.]+)\s*\^\s*(?:\{\s*\\circ\s*\}|\\circ)", r"{\1\\cdot\\frac{\\pi}{180}}", s)
    s = re.sub(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ", "", s)
    s = re.sub(r"(\d)\s*\\text\s*\{\s*[A-Za-z][A-Za-z ]*\}\s*$", r"\1", s)  # 17\text{ any words} is 17
    s = _unwrap(s, _WRAPPERS)
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s*\\approx.*$", "", s)
    s = s.rstrip("\\").strip()
    s = re.sub(r"\s*percent\b", "%", s, flags=re.I)
    s = re.sub(r"\\(?:leqslant|leq|le)(?![A-Za-z])", "<=", s)
    s = re.sub(r"\\(?:geqslant|geq|ge)(?![A-Za-z])", ">=", s)
    s = re.sub(r"\\(?:neq|ne)(?![A-Za-z])", "!=", s)
    s = s.replace("\\lt", "<").replace("\\gt", ">")
    s = re.sub(r"\\mathbb\s*\{?R\}?|\\R\b|ℝ", "(-oo, oo)", s)
    s = re.sub(r"\\infty\b|\binfinity\b", "oo", s)
    s = re.sub(r"\+\s*oo", "oo", s)
    s = re.sub(r"\\cup\b|\\lor\b|\\vee\b", " U ", s)
    s = re.sub(r"\s*(?:\\cap\b|∩)\s*", " \\\\cap ", s)
    s = re.sub(r"\s*\\in(?![A-Za-z])\s*", lambda m: " \\in ", s)
    m = _UNIT_TAIL.match(s)
    if m and re.search(r"\d", m.group(1)):
        s = m.group(1)
    s = re.sub(r"\s+", " ", s).strip().rstrip(".").strip()
    s = _fix_sqrt(_fix_fracs(s))
    s = re.sub(r"_\{(\w)\}", r"_\1", s)
    s = re.sub(r"(^|[^\d])\.(\d)", r"\g<1>0.\2", s)
    return s


# ----------------------------------------------------------------------------- numbers


def parse_number(s: str) -> Optional[Fraction]:
    """An exact value for a plain number: ``1,234.5``, ``-3``, ``033``, ``3/4``, ``\\frac{3}{4}``, ``1\\frac12``,
    ``1 1/2``, ``1e3``, ``3.5 \\times 10^{-3}``, ``25%`` (a percentage is its hundredth)."""
    t = s.strip()
    pct = t.endswith("%")
    t = t[:-1].strip() if pct else t
    m = re.fullmatch(r"([+-]?\d+)\s*(?:\\frac\{(\d+)\}\{(\d+)\}|\s(\d+)/(\d+))", t)  # mixed number
    if m:
        whole = Fraction(m.group(1))
        num, den = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
        if int(den) == 0 or int(num) >= int(den):
            return None
        v = abs(whole) + Fraction(int(num), int(den))
        v = -v if m.group(1).startswith("-") else v
        return v / 100 if pct else v
    t = t.replace(" ", "")
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    m = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:\\times|\*|\\cdot)10\^\{?([+-]?\d+)\}?", t)
    if m:
        t = "%se%s" % (m.group(1), m.group(2))
    m = re.fullmatch(r"([+-]?)\\frac\{([+-]?[\d.]+)\}\{([+-]?[\d.]+)\}", t)
    try:
        if m:
            v = Fraction(m.group(2)) / Fraction(m.group(3))
            v = -v if m.group(1) == "-" else v
        elif re.fullmatch(r"[+-]?\d+/\d+", t):
            v = Fraction(t)
        elif re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?", t):
            v = Fraction(t)
        else:
            return None
    except (ValueError, ZeroDivisionError):
        return None
    return v / 100 if pct else v


def _numbers_close(a, b) -> bool:
    """Exact for integers; other rationals within a relative 1e-12 (a float artefact such as
    0.30000000000000004 is 0.3); irrationals within a relative 1e-9 (a rounded decimal such as 1.732
    is not sqrt(3))."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        if a == b or a.denominator == 1 and b.denominator == 1:
            return a == b
        return abs(a - b) <= Fraction(1, 10 ** 12) * max(abs(a), abs(b))
    try:
        return abs(complex(a) - complex(b)) <= 1e-9 * max(1.0, abs(complex(a)), abs(complex(b)))
    except (OverflowError, TypeError, ValueError):
        return False


# ----------------------------------------------------------------------------- expressions

_FUNCTIONS = ("arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "sin", "cos", "tan", "sec", "csc", "cot", "ln", "log", "exp",
              "sgn", "signum")
_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "theta", "vartheta", "lambda", "mu", "nu", "rho", "sigma",
          "tau", "phi", "varphi", "psi", "omega", "xi", "eta", "zeta", "kappa", "chi")
_KNOWN = set(_FUNCTIONS) | set(_GREEK) | {"sqrt", "root", "binom", "abs", "pi"}
_LOG_BASE = re.compile(r"^log_(\d+|[A-Za-z])$")
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|([A-Za-z]+(?:_[A-Za-z0-9]+)?'*)|(\*\*|[-+*/(),!]))")

# CAS and calculator spellings (KAS, nerdamer, mathjs, graphing calculators): reciprocal hyperbolic and inverse
# reciprocal trigonometric functions, rounding functions, real n-th roots and the spelled-out factorial.
_MORE_FUNCTIONS = ("sech", "csch", "coth", "arcsec", "arccsc", "arccot", "arcsinh", "arccosh", "arctanh",
                   "floor", "ceil", "round", "trunc", "cbrt", "nthroot", "factorial")
_KNOWN |= set(_MORE_FUNCTIONS)
_FLOOR_CEIL = re.compile(r"(?:\\(?:left|right|bigl|bigr|Bigl|Bigr)\s*)?(\\[lr](?:floor|ceil)|[⌊⌋⌈⌉])")


def _more_latex_functions(t: str) -> str:
    """``\\coth x``, ``\\operatorname{sech}`` (already unwrapped), ``\\lfloor x \\rfloor``, ``⌈x⌉`` to function calls."""
    for name in _MORE_FUNCTIONS:
        t = re.sub(r"\\" + name + r"(?![A-Za-z])", " " + name + " ", t)
    opening = {"\\lfloor": " floor(", "⌊": " floor(", "\\lceil": " ceil(", "⌈": " ceil("}
    return _FLOOR_CEIL.sub(lambda m: opening.get(m.group(1), ")"), t)


def _more_function(name: str, args):
    """Values of the ``_MORE_FUNCTIONS`` (and of ``fact`` at a non-integer: Gamma(x + 1), so (1/2)! = sqrt(pi)/2)."""
    if name == "nthroot" and len(args) in (1, 2):
        return _root(args[0], args[1]) if len(args) == 2 else _fn("sqrt", args[0])
    if len(args) != 1:
        raise ValueError("wrong number of arguments")
    v = args[0]
    if name == "cbrt":
        return _root(v, Fraction(3))
    if isinstance(v, complex):
        if abs(v) > 1e6:
            raise ValueError("complex argument out of range")
        ctable = {"sech": lambda z: 1 / cmath.cosh(z), "csch": lambda z: 1 / cmath.sinh(z), "coth": lambda z: 1 / cmath.tanh(z),
                  "arcsec": lambda z: cmath.acos(1 / z), "arccsc": lambda z: cmath.asin(1 / z), "arccot": lambda z: cmath.atan(1 / z),
                  "arcsinh": cmath.asinh, "arccosh": cmath.acosh, "arctanh": cmath.atanh}
        if name not in ctable:
            raise ValueError("not defined for complex values")
        return ctable[name](v)
    if name in ("floor", "ceil", "round", "trunc"):
        q = v if isinstance(v, Fraction) else Fraction(float(v))
        if name == "round":  # half away from zero, as in school
            return Fraction(math.floor(abs(q) + Fraction(1, 2))) * (1 if q >= 0 else -1)
        return Fraction({"floor": math.floor, "ceil": math.ceil, "trunc": math.trunc}[name](q))
    x = float(v)
    if name in ("fact", "factorial"):
        if isinstance(v, Fraction) and v.denominator == 1:
            if not 0 <= v <= 1000:
                raise ValueError("factorial out of range")
            return Fraction(math.factorial(int(v)))
        if x > 170:
            raise ValueError("factorial out of range")
        return math.gamma(x + 1)  # raises ValueError at the poles
    table = {"sech": lambda z: 1 / math.cosh(z), "csch": lambda z: 1 / math.sinh(z), "coth": lambda z: 1 / math.tanh(z),
             "arcsec": lambda z: math.acos(1 / z), "arccsc": lambda z: math.asin(1 / z), "arccot": lambda z: math.atan(1 / z),
             "arcsinh": math.asinh, "arccosh": math.acosh, "arctanh": math.atanh}
    return table[name](x)


def _real_power_of_negative(a, b):
    """``a ** b`` for a negative ``a`` and ``b = p/q`` in lowest terms with ``q`` odd: the real value, as
    ``\\sqrt[q]{a}^p`` is (``(-5)^{1/3}`` = ``-\\sqrt[3]{5}``, ``(-8)^{2/3}`` = 4); other exponents have no real value."""
    if not (isinstance(b, Fraction) and b.denominator % 2 == 1 and b.denominator <= 99):
        raise ValueError("fractional power of a negative number")
    r = _exact_root(-a, b) if isinstance(a, Fraction) else None
    magnitude = r if r is not None else float(-a) ** float(b)
    return -magnitude if b.numerator % 2 else magnitude

def _postfix_factorials(src: str) -> str:
    """Each ``!`` of the joined source applied to its operand: ``x !``, ``3 !``, a parenthesised group with
    nested parentheses (``( 2 * ( n + 1 ) ) !``) or a call (``sqrt ( 2 ) !``) -> ``fact(...)``; ``n!!`` (a double
    factorial) is not read."""
    if re.search(r"!\s*!", src):
        raise ValueError("double factorial")
    while "!" in src:
        k = src.index("!")
        j = len(src[:k].rstrip()) - 1
        if j < 0:
            raise ValueError("factorial without an operand")
        if src[j] == ")":
            start, depth = j, 0
            while start >= 0:
                depth += (src[start] == ")") - (src[start] == "(")
                if depth == 0:
                    break
                start -= 1
            if start < 0:
                raise ValueError("unbalanced parentheses")
            name = re.search(r"[A-Za-z_][A-Za-z_0-9]*\s*$", src[:start])
            if name:
                start = name.start()
        else:
            start = re.search(r"\S+$", src[:j + 1]).start()
        src = src[:start] + "fact(%s)" % src[start:j + 1] + src[k + 1:]
    return src


def _replace_command(s: str, cmd: str, nargs: int, fmt) -> str:
    """Replaces ``cmd{a}{b}`` (balanced braces; ``\\sqrt[n]{a}`` gets its index as a third argument)."""
    for _ in range(50):
        j = s.find(cmd)
        while j != -1 and re.match(r"[A-Za-z]", s[j + len(cmd):j + len(cmd) + 1]):
            j = s.find(cmd, j + 1)
        if j == -1:
            return s
        k = j + len(cmd)
        index = None
        if s[k:k + 1] == "[":
            close = s.find("]", k)
            if close == -1:
                raise ValueError("unbalanced")
            index, k = s[k + 1:close], close + 1
        args = []
        for _ in range(nargs):
            while k < len(s) and s[k] == " ":
                k += 1
            arg, k2 = _braced(s, k)
            if arg is None:
                raise ValueError("argument without braces")
            args.append(arg)
            k = k2
        s = s[:j] + fmt(args, index) + s[k:]
    raise ValueError("too deeply nested")


def latex_to_python(s: str) -> str:
    """LaTeX or plain math to a Python expression over names, numbers and the functions of ``_eval``
    (raises ValueError when unsure)."""
    t = s
    t = _replace_command(t, "\\frac", 2, lambda a, i: "((%s)/(%s))" % (a[0], a[1]))
    t = _replace_command(t, "\\binom", 2, lambda a, i: " binom(%s,%s)" % (a[0], a[1]))
    t = _replace_command(t, "\\sqrt", 1, lambda a, i: " sqrt(%s)" % a[0] if i is None else " root(%s,%s)" % (a[0], i))
    if t.count("|") % 2 == 0 and "|" in t:
        parts = t.split("|")
        t = "".join(p + ((" abs(" if k % 2 == 0 else ")") if k < len(parts) - 1 else "") for k, p in enumerate(parts))
    t = re.sub(r"\\log\s*_\s*\{?\s*(\d+|[A-Za-z])\s*\}?", r" log_\1 ", t)
    for name in _FUNCTIONS + _GREEK + ("pi",):
        t = re.sub(r"\\" + name + r"(?![A-Za-z])", " " + name + " ", t)
    t = _more_latex_functions(t)
    t = t.replace("\\cdot", "*").replace("\\times", "*").replace("\\div", "/")
    if "\\" in t or re.search(r"[=<>\[\];&%$]", t):
        raise ValueError("not a simple expression")
    t = t.replace("{", "(").replace("}", ")").replace("^", "**")
    tokens = []
    pos = 0
    while pos < len(t):
        m = _TOKEN.match(t, pos)
        if not m or m.end() == pos:
            if t[pos:].strip() == "":
                break
            raise ValueError("unexpected character")
        pos = m.end()
        if m.group(1):
            tokens.append(("num", m.group(1)))
        elif m.group(2):
            word = m.group(2)
            if word in _KNOWN or "_" in word or "'" in word or len(word) == 1:
                is_fn = word in _FUNCTIONS or word in _MORE_FUNCTIONS or word in ("sqrt", "root", "binom", "abs") or _LOG_BASE.match(word)
                tokens.append(("fn" if is_fn else "name", word))
            else:
                parts = re.findall(r"pi|[A-Za-z]", word)
                tokens.extend(("name", p) for p in parts)
        else:
            tokens.append(("op", m.group(3)))
    return _join(_apply_bare_functions(tokens))


def _apply_bare_functions(tokens):
    """``sin x``, ``sin**2 x``, ``sin 2x`` -> ``sin(x)``, ``sin(x)**2``, ``sin(2*x)``."""
    out = []
    i = 0
    while i < len(tokens):
        kind, val = tokens[i]
        if kind == "fn" and i + 1 < len(tokens) and tokens[i + 1] != ("op", "("):
            power = []
            j = i + 1
            if tokens[j] == ("op", "**") and j + 1 < len(tokens) and tokens[j + 1][0] == "num":
                power = [("op", "**"), tokens[j + 1]]
                j += 2
            arg = []
            while j < len(tokens) and tokens[j][0] in ("num", "name"):
                arg.append(tokens[j])
                j += 1
                if j + 1 < len(tokens) and tokens[j] == ("op", "**") and tokens[j + 1][0] in ("num", "name"):
                    arg.extend(tokens[j:j + 2])  # \sin x^2 is sin(x^2)
                    j += 2
            if not arg and j + 1 < len(tokens) and tokens[j][0] == "fn" and tokens[j + 1] == ("op", "("):
                arg.append(tokens[j])  # \\ln|x|, \\sin\\sqrt{x}: a function call is the argument
                j += 1
            if (not arg or arg == [tokens[j - 1]] and tokens[j - 1][0] == "fn") and j < len(tokens) and tokens[j] == ("op", "("):
                depth = 0
                while j < len(tokens):
                    arg.append(tokens[j])
                    depth += tokens[j] == ("op", "(")
                    depth -= tokens[j] == ("op", ")")
                    j += 1
                    if depth == 0:
                        break
            if not arg:
                raise ValueError("function without an argument")
            opening, closing = ("op", "("), ("op", ")")
            out.extend([opening, opening, (kind, val), opening] + arg + [closing, closing] + power + [closing])  # ((fn(arg))**k)
            i = j
            continue
        out.append((kind, val))
        i += 1
    return out


def _join(tokens) -> str:
    """Tokens to source, with the implicit multiplications made explicit (``2x``, ``x(y)``, ``)(``, ``2^6 3^5``)."""
    out = []
    prev = None
    for kind, val in tokens:
        if prev is not None:
            pk, pv = prev
            left = pk in ("num", "name") or pv in (")", "!")
            right = kind in ("num", "name", "fn") or val == "("
            if left and right:
                out.append("*")
        out.append(val)
        prev = (kind, val)
    src = " ".join(out)
    return _postfix_factorials(src)


def _fn(name, v, principal=False):
    """``name(v)``; a square root of a negative number raises unless ``principal`` (then it is the
    principal value: ``sqrt(-4)`` is ``2i``)."""
    c = isinstance(v, complex)
    if name in ("sgn", "signum"):
        if c:
            return v / abs(v) if v else Fraction(0)
        return Fraction((v > 0) - (v < 0))
    x = v if c else float(v)
    if name == "sqrt" and (c or (principal and x < 0)):
        return cmath.sqrt(v)
    if name == "sqrt":
        if isinstance(v, Fraction) and v >= 0:
            n, d = v.numerator, v.denominator
            rn, rd = math.isqrt(n), math.isqrt(d)
            if rn * rn == n and rd * rd == d:
                return Fraction(rn, rd)
        if c or x < 0:
            raise ValueError("sqrt of a negative number")
        return math.sqrt(x)
    if name == "abs":
        return abs(v)
    if c:  # a value with i in it: the principal branch
        if name in ("ln", "log") and v == 0:
            raise ValueError("log of zero")
        ctable = {"sin": cmath.sin, "cos": cmath.cos, "tan": cmath.tan, "arcsin": cmath.asin, "arccos": cmath.acos,
                  "arctan": cmath.atan, "sinh": cmath.sinh, "cosh": cmath.cosh, "tanh": cmath.tanh, "exp": cmath.exp,
                  "sec": lambda z: 1 / cmath.cos(z), "csc": lambda z: 1 / cmath.sin(z), "cot": lambda z: 1 / cmath.tan(z),
                  "ln": cmath.log, "log": cmath.log}
        if abs(v) > 1e6:
            raise ValueError("complex argument out of range")
        return ctable[name](v)
    table = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "arcsin": math.asin, "arccos": math.acos, "arctan": math.atan,
             "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "exp": math.exp,
             "sec": lambda z: 1 / math.cos(z), "csc": lambda z: 1 / math.sin(z), "cot": lambda z: 1 / math.tan(z),
             "ln": math.log, "log": math.log}
    if name in ("ln", "log") and x <= 0:
        raise ValueError("log of a non-positive number")
    return table[name](x)


def _eval(node, env, principal=False):
    """The value of a parsed expression at ``env`` (Fractions stay exact); ``principal``: square roots of
    negative numbers take their principal value instead of failing."""
    if isinstance(node, ast.Expression):
        return _eval(node.body, env, principal)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value)
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id == "pi":
            return math.pi
        if node.id == "e":
            return math.e
        if node.id == "i":
            return 1j
        raise ValueError("unknown name")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, env, principal)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env, principal), _eval(node.right, env, principal)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Pow):
            if isinstance(b, Fraction) and b.denominator == 1 and (abs(b) <= 64 or isinstance(a, Fraction)):
                if isinstance(a, Fraction) and max(abs(a.numerator), a.denominator) > 1 and max(a.numerator.bit_length(), a.denominator.bit_length()) * abs(b) > 20000:
                    raise ValueError("power too large")  # ((9^64)^64)^64 would not finish
                return a ** int(b)
            if abs(complex(b)) > 64 or abs(complex(a)) > 1e12:
                raise ValueError("exponent out of range")
            if isinstance(a, complex) or isinstance(b, complex):  # e^{i\pi/2}, (4+4\sqrt3 i)^{1/5}: the principal value
                if a == 0:
                    raise ValueError("complex power of zero")
                return complex(a) ** complex(b)
            if float(a) < 0:
                return _real_power_of_negative(a, b)
            if isinstance(a, Fraction) and isinstance(b, Fraction) and a > 0:
                r = _exact_root(a, b)
                if r is not None:
                    return r
            return float(a) ** float(b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_eval(x, env, principal) for x in node.args]
        name = node.func.id
        if name == "root" and len(args) == 2:
            return _root(args[0], args[1])
        if name in _MORE_FUNCTIONS or name == "fact" and len(args) == 1 and not (isinstance(args[0], Fraction) and args[0].denominator == 1):
            return _more_function(name, args)
        if name == "binom" and len(args) == 2 and all(isinstance(x, Fraction) and x.denominator == 1 and 0 <= x <= 1000 for x in args):
            return Fraction(math.comb(int(args[0]), int(args[1])))
        if name == "fact" and len(args) == 1 and isinstance(args[0], Fraction) and args[0].denominator == 1 and 0 <= args[0] <= 1000:
            return Fraction(math.factorial(int(args[0])))
        if len(args) == 1 and (name in _FUNCTIONS or name in ("sqrt", "abs")):
            return _fn(name, args[0], principal)
        base = _LOG_BASE.match(name)
        if base and len(args) == 1:
            b = Fraction(base.group(1)) if base.group(1).isdigit() else env.get(base.group(1))
            if b is None or isinstance(b, complex) or b <= 0 or b == 1:
                raise ValueError("bad logarithm base")
            return _fn("ln", args[0]) / math.log(float(b))
    raise ValueError("unsupported expression")


def _exact_root(a: Fraction, b: Fraction) -> Optional[Fraction]:
    """``a ** b`` exactly when b = p/q and a is a perfect q-th power (small q)."""
    if b.denominator > 12:
        return None
    q = b.denominator
    n = round(a.numerator ** (1.0 / q))
    d = round(a.denominator ** (1.0 / q))
    for rn in (n - 1, n, n + 1):
        for rd in (d - 1, d, d + 1):
            if rn > 0 and rd > 0 and rn ** q == a.numerator and rd ** q == a.denominator:
                return Fraction(rn, rd) ** b.numerator
    return None


def _root(x, n):
    if not (isinstance(n, Fraction) and n.denominator == 1 and 1 < n <= 12):
        # root(x, n) with a symbolic n (sampled at rational points): the positive real root of a positive x
        if isinstance(n, complex) or isinstance(x, complex) or n == 0 or x <= 0 or abs(n) > 1e6:
            raise ValueError("unsupported root")
        return float(x) ** (1.0 / float(n))
    if isinstance(x, Fraction) and x >= 0:
        r = _exact_root(x, Fraction(1, int(n)))
        if r is not None:
            return r
    if isinstance(x, complex) or (x < 0 and n % 2 == 0):
        raise ValueError("even root of a negative number")
    return math.copysign(abs(float(x)) ** (1.0 / float(n)), float(x))


def _compile(s: str):
    if len(s) > MAX_ANSWER_CHARS:
        raise ValueError("too long")
    tree = ast.parse(latex_to_python(s), mode="eval")
    return tree, _variables(tree)


_CONSTANTS = {"pi", "e", "i"}


def _variables(*trees) -> set:
    """The free variables of parsed expressions: names that are neither constants nor called functions
    (a log base that is a letter counts as a variable)."""
    called = {n.func.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names = {n.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Name)} - called - _CONSTANTS
    bases = {m.group(1) for m in map(_LOG_BASE.match, called) if m and not m.group(1).isdigit()}
    return names | bases


def value_of(s: str):
    """The value of a constant expression (Fraction when exact, else float or complex); None if it has variables or fails."""
    try:
        tree, names = _compile(s)
        if names:
            return None
        try:
            return _eval(tree, {})
        except ValueError:  # sqrt(-4) has no real value: its principal value, 2i
            return _eval(tree, {}, principal=True)
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None


def expressions_equal(a: str, b: str) -> Optional[bool]:
    """Numeric identity test: exact arithmetic on rationals, random points for variables (rational points,
    so polynomials compare exactly); None when it cannot decide."""
    try:
        ta, na = _compile(a)
        tb, nb = _compile(b)
    except (ValueError, SyntaxError, RecursionError):
        return None
    names = sorted(na | nb)
    if len(names) > 6:
        return None
    # real values first (sqrt(a)sqrt(b) is sqrt(ab) where both are real); where the two sides are never real
    # at the same points (i/sqrt(x) against sqrt(-1/x)), principal square roots of negative numbers
    got = _agree_at_points(ta, tb, names, False)
    return got if got is not None else _agree_at_points(ta, tb, names, True)


def _agree_at_points(ta, tb, names, principal: bool) -> Optional[bool]:
    rng = random.Random(20240613)
    agreed = 0
    # n!/(k!(n-k)!) and binom(n, k) are defined at whole numbers: sample those there
    whole = any(isinstance(x, ast.Call) and getattr(x.func, "id", None) in ("fact", "binom") for t in (ta, tb) for x in ast.walk(t))
    for k in range(80 if names else 1):
        if whole:
            env = {n: Fraction(rng.randint(0, 24)) for n in names}
        elif k < 40:
            env = {n: Fraction(rng.randint(-60, 60), rng.randint(1, 9)) for n in names}
        elif agreed >= 3:
            break
        else:  # e^{6(x^2+y^2)} overflows at the first points: small ones
            env = {n: Fraction(rng.randint(-20, 20), 10) for n in names}
        try:
            va, vb = _eval(ta, env, principal), _eval(tb, env, principal)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
            if names:
                continue
            return None
        if not _numbers_close(va, vb):
            return False
        agreed += 1
        if agreed >= 6 or not names:
            return True
    return True if agreed >= 3 else None


_TRIAL_PRIMES = 10 ** 4


def _factor(n: int, out: dict, k) -> bool:
    """Adds k times the prime exponents of n > 0 to out; False when a cofactor is left that may be composite."""
    proven = True
    p = 2
    while p * p <= n and p < _TRIAL_PRIMES:
        while n % p == 0:
            out[p] = out.get(p, 0) + k
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        out[n] = out.get(n, 0) + k
        proven = n < _TRIAL_PRIMES * _TRIAL_PRIMES
    return proven


def _power_product(node, out: dict, k=1):
    """A constant product of powers, as prime exponents added (times k) to out, without evaluating the powers;
    returns (sign, proven) or None when the expression is not such a product."""
    if isinstance(node, ast.Expression):
        node = node.body
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        got = _power_product(node.operand, out, k)
        return got and ((-got[0] if isinstance(node.op, ast.USub) else got[0]), got[1])
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        left = _power_product(node.left, out, k)
        right = left and _power_product(node.right, out, k if isinstance(node.op, ast.Mult) else -k)
        return right and (left[0] * right[0], left[1] and right[1])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        e = _eval(node.right, {})
        if not isinstance(e, Fraction) or e.numerator.bit_length() > 4096 or e.denominator > 64:
            return None
        inner = {}
        got = _power_product(node.left, inner, 1)
        if got is None or (got[0] < 0 and e.denominator > 1):
            return None
        for p, x in inner.items():
            out[p] = out.get(p, 0) + k * e * x
        return (got[0] if e.numerator % 2 else 1), got[1]
    v = _eval(node, {})
    if not isinstance(v, Fraction) or v == 0:
        return None
    proven = _factor(abs(v.numerator), out, k) & _factor(v.denominator, out, -k)
    return (1 if v > 0 else -1), proven


def _power_products_equal(a: str, b: str) -> Optional[bool]:
    """Constant products of powers compared by their prime exponents (exact, without expanding the powers);
    None when a side is not such a product or a side's cofactor could not be factored."""
    try:
        fa, fb = {}, {}
        ga = _power_product(_compile(a)[0], fa)
        gb = ga and _power_product(_compile(b)[0], fb)
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None
    if not gb:
        return None
    fa = {p: x for p, x in fa.items() if x}
    fb = {p: x for p, x in fb.items() if x}
    if ga[0] == gb[0] and fa == fb:
        return True
    return False if ga[1] and gb[1] else None


# ----------------------------------------------------------------------------- sympy (optional)

_HUGE_POWER = re.compile(r"(\^|\*\*)\s*[({]?\s*-?\d{3,}")
SYMPY_TIMEOUT_S = 2.0


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


class _Timeout(Exception):
    pass


def _with_timeout(fn, seconds: float):
    """Runs fn() under a SIGALRM timer (main thread on POSIX); elsewhere runs it as is, bounded by _safe_for_sympy."""
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return fn()

    def on_alarm(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer:  # the caller's own timer keeps running
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))


def _sympy_equal(a: str, b: str) -> Optional[bool]:
    if not (_safe_for_sympy(a) and _safe_for_sympy(b)):
        return None  # sympy could expand it without bound: too slow inside a reward
    try:
        import sympy
        from sympy.parsing.sympy_parser import parse_expr
    except Exception:  # sympy not installed: the stdlib checks decide
        return None
    try:
        names = {"fact": sympy.factorial, "sgn": sympy.sign, "signum": sympy.sign, "ln": sympy.log, "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
                 "root": lambda x, n: sympy.root(x, n), "binom": sympy.binomial, "i": sympy.I, "e": sympy.E}
        pa = parse_expr(latex_to_python(a), local_dict=names, evaluate=True)
        pb = parse_expr(latex_to_python(b), local_dict=names, evaluate=True)
        return bool(_with_timeout(lambda: sympy.simplify(pa - pb) == 0, SYMPY_TIMEOUT_S))
    except BaseException as e:  # noqa: B036  (a timeout, or anything sympy raises, means "cannot decide")
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return None


# ----------------------------------------------------------------------------- math_verify (optional)


def _math_verify():
    try:
        import math_verify

        return math_verify
    except Exception:
        return None


def verifier() -> str:
    """Which equivalence checker is in use: ``math_verify`` (when importable, as in verl and TRL
    environments), else ``sympy`` (when importable), else ``stdlib``."""
    if _math_verify() is not None:
        return "math_verify"
    try:
        import sympy  # noqa: F401

        return "sympy"
    except Exception:
        return "stdlib"


def _math_verify_equal(pred: str, truth: str) -> Optional[bool]:
    mv = _math_verify()
    if mv is None:
        return None
    try:
        gold = mv.parse("\\boxed{%s}" % truth)
        answer = mv.parse("\\boxed{%s}" % pred)
        if not gold or not answer:
            return None
        return bool(mv.verify(gold, answer))
    except Exception:
        return None


# ----------------------------------------------------------------------------- structure


def _split_top(s: str, sep: str = ","):
    parts, depth, cur, i = [], 0, "", 0
    while i < len(s):
        ch = s[i]
        if s.startswith("\\{", i) or s.startswith("\\}", i):
            depth += 1 if s[i + 1] == "{" else -1
            cur += s[i:i + 2]
            i += 2
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if depth == 0 and s.startswith(sep, i):
            parts.append(cur)
            cur = ""
            i += len(sep)
            continue
        cur += ch
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts]


def _closing(s: str, i: int) -> int:
    """Index of the bracket closing the one at s[i] (any of ([{ closes with any of )]}), or -1."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] in "([{":
            depth += 1
        elif s[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return -1


_VAR_LHS = re.compile(r"^(?:[A-Za-z](?:_\w+)?'*|\\[a-z]+|[A-Za-z](?:_\w+)?\s*\([A-Za-z, ]*\))$")
_RELATION = re.compile(r"<=|>=|!=|<|>")


def _strip_lhs(s: str) -> str:
    """``x = 5`` -> ``5``, ``f(x) = 2x+3`` -> ``2x+3``, ``x \\in [0, 1]`` -> ``[0, 1]`` (a single name on the left)."""
    if " \\in " in s:
        lhs, rhs = s.split(" \\in ", 1)
        if _VAR_LHS.match(lhs.strip()):
            return rhs.strip()
    parts = _split_top(s, "=")
    if len(parts) == 2 and not _RELATION.search(s) and all(parts):
        if _VAR_LHS.match(parts[0]):
            return parts[1]
        if _VAR_LHS.match(parts[1]) and not _VAR_LHS.match(parts[0]):  # 5 = x
            return parts[0]
    return s


def _expand_pm(items):
    """``1\\pm\\sqrt5`` stands for two answers: ``1-\\sqrt5`` and ``1+\\sqrt5`` (up to 4 signs in all)."""
    if not 0 < sum(p.count("\\pm") for p in items) <= 4:
        return list(items)
    out = list(items)
    while any("\\pm" in p for p in out):
        out = [q for p in out for q in ((p.replace("\\pm", "-", 1), p.replace("\\pm", "+", 1)) if "\\pm" in p else (p,))]
    return out


def _parse(s: str, depth: int = 0):
    """A normalized answer as a small tree: ("matrix", rows), ("set", items), ("list", items) (unordered:
    "separated by commas"), ("seq", open, close, items) (tuples, intervals), ("union", parts),
    ("rel", text), ("eq", lhs, rhs), ("choice", letter) or ("expr", text)."""
    s = s.strip()
    if depth > 6:
        return ("expr", s)
    m = re.fullmatch(r"\\begin\{([pbvBV]?matrix|array)\}(\{[^{}]*\})?(.*)\\end\{\1\}", s, re.S)
    if m:
        rows = [r for r in re.split(r"\\\\", m.group(3)) if r.strip()]
        return ("matrix", tuple(tuple(_parse(c.strip(), depth + 1) for c in r.split("&")) for r in rows))
    m = re.fullmatch(r"\\begin\{(cases|aligned|align\*?|gathered)\}(\{[^{}]*\})?(.*)\\end\{\1\}", s, re.S)
    if m:  # a system: its lines in any order
        rows = [r.replace("&", " ").strip().rstrip(",;.") for r in re.split(r"\\\\", m.group(3))]
        return ("list", tuple(_parse(r, depth + 1) for r in rows if r))
    if s.startswith("\\{") and s.endswith("\\}") and _split_top(s, " U ") == [s]:
        return ("set", tuple(_parse(p, depth + 1) for p in _expand_pm(_split_top(s[2:-2])) if p))
    if s.startswith("{") and _closing(s, 0) == len(s) - 1 and ("," in s or "\\pm" in s):
        return ("set", tuple(_parse(p, depth + 1) for p in _expand_pm(_split_top(s[1:-1])) if p))
    alternatives = [p for p in _split_top(s, " or ") if p]
    if len(alternatives) > 1:
        nodes = tuple(_parse(_strip_lhs(p), depth + 1) for p in alternatives)
        return ("union", nodes) if all(n[0] == "rel" for n in nodes) else ("list", nodes)
    unions = _split_top(s, " U ")
    if len(unions) > 1:
        return ("union", tuple(_parse(p, depth + 1) for p in unions))
    meets = _split_top(s, " \\cap ")
    if len(meets) > 1:
        return ("inter", tuple(_parse(p, depth + 1) for p in meets))
    conjuncts = [p for p in _split_top(s, " and ") if p]
    if len(conjuncts) > 1 and all(_RELATION.search(p) for p in conjuncts):  # x > 1 and x < 5
        return ("and", tuple(_parse(p, depth + 1) for p in conjuncts))
    items = [p for p in _expand_pm(_split_top(s)) if p]
    if len(items) > 1 and parse_number(s) is None:
        items = [re.sub(r"^(?:and|or)\s+", "", p) for p in items]
        return ("list", tuple(_parse(_strip_lhs(p), depth + 1) for p in items))
    if s[:1] in "([" and s[-1:] in ")]" and _closing(s, 0) == len(s) - 1:
        inner = _split_top(s[1:-1])
        if len(inner) > 1:
            return ("seq", s[0], s[-1], tuple(_parse(p, depth + 1) for p in inner))
    if re.fullmatch(r"\(?[A-E]\)?(?:[.:)]\s.*)?", s):
        return ("choice", re.search(r"[A-E]", s).group(0))
    if _RELATION.search(s):
        return ("rel", s)
    eq = _split_top(s, "=")
    if len(eq) == 2:
        return ("eq", eq[0], eq[1])
    return ("expr", s)


def _interval_parts(node):
    """A node as a list of intervals (lo, lo_closed, hi, hi_closed), or None."""
    if node[0] == "union":
        out = []
        for p in node[1]:
            got = _interval_parts(p)
            if got is None:
                return None
            out.extend(got)
        return out
    if node[0] == "seq" and len(node[3]) == 2 and all(x[0] == "expr" for x in node[3]):
        return [(node[3][0][1], node[1] == "[", node[3][1][1], node[2] == "]")]
    if node[0] == "set" and all(x[0] == "expr" for x in node[1]):
        return [(x[1], True, x[1], True) for x in node[1]]
    if node[0] == "rel":
        return _relation_intervals(node[1])
    if node[0] == "and":
        parts = [_interval_parts(p) for p in node[1]]
        if any(p is None or len(p) != 1 for p in parts):
            return None
        return _intersect([p[0] for p in parts])
    if node[0] == "inter":  # (-1, 1] \cap [1, 2) is {1}: the pieces' pairwise intersections
        out = None
        for p in node[1]:
            got = _interval_parts(p)
            if got is None:
                return None
            if out is None:
                out = got
                continue
            pieces = [_intersect([x, y]) for x in out for y in got]
            if any(q is None for q in pieces):
                return None
            out = [q[0] for q in pieces]
        return out
    return None


def _endpoint_value(e: str):
    e = e.replace(" ", "")
    if e.lstrip("+") == "oo":
        return math.inf
    if e == "-oo":
        return -math.inf
    v = value_of(e)
    if v is None or isinstance(v, complex):
        return None
    return v


def _intersect(intervals):
    """The intersection of single intervals with numeric endpoints, as a list of at most one interval; None otherwise."""
    lo, lo_c, hi, hi_c = "-oo", False, "oo", False
    for x in intervals:
        vl, vh, cl, ch = _endpoint_value(x[0]), _endpoint_value(x[2]), _endpoint_value(lo), _endpoint_value(hi)
        if None in (vl, vh, cl, ch):
            return None
        if vl > cl or (vl == cl and not x[1]):
            lo, lo_c = x[0], x[1]
        if vh < ch or (vh == ch and not x[3]):
            hi, hi_c = x[2], x[3]
    return [(lo, lo_c, hi, hi_c)]


def _merged(intervals):
    """Intervals with numeric endpoints, sorted and with overlapping or touching pieces joined, as
    (lo, lo_closed, hi, hi_closed) floats; None when an endpoint is not a number."""
    vals = []
    for x in intervals:
        lo, hi = _endpoint_value(x[0]), _endpoint_value(x[2])
        if lo is None or hi is None:
            return None
        if lo > hi or (lo == hi and not (x[1] and x[3])):
            continue  # empty
        vals.append((lo, x[1] and lo != -math.inf, hi, x[3] and hi != math.inf))
    vals.sort(key=lambda v: (v[0], not v[1]))
    out = []
    for v in vals:
        if out and (v[0] < out[-1][2] or (v[0] == out[-1][2] and (v[1] or out[-1][3]))):
            last = out[-1]
            if v[2] > last[2] or (v[2] == last[2] and v[3]):
                out[-1] = (last[0], last[1], v[2], v[3])
        else:
            out.append(v)
    return out


def _one_relation_variable(node) -> bool:
    """Whether the relations in a node speak of at most one variable (``x > 2 or y > 2`` is no interval)."""
    names = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "rel":
            names |= {t for t in re.split(r"<=|>=|<|>", n[1].replace(" ", "")) if re.fullmatch(r"[A-Za-z](?:_\w+)?", t)}
        elif n[0] in ("union", "and", "inter"):
            stack.extend(n[1])
    return len(names) <= 1


def _relation_intervals(s: str):
    """``x >= 5``, ``5 <= x``, ``-1 < x <= 3`` as intervals of one variable; None otherwise."""
    pieces = re.split(r"(<=|>=|<|>)", s.replace(" ", ""))
    if "!=" in s or len(pieces) not in (3, 5):
        return None
    terms, ops = pieces[0::2], pieces[1::2]
    var = [k for k, t in enumerate(terms) if re.fullmatch(r"[A-Za-z](?:_\w+)?", t)]
    if len(var) != 1:
        return None
    k = var[0]
    lo, lo_c, hi, hi_c = "-oo", False, "oo", False
    for j, op in enumerate(ops):
        left, right = terms[j], terms[j + 1]
        if j + 1 == k:  # bound op var
            bound, strict = left, op in "<>"
            if op.startswith("<"):
                lo, lo_c = bound, not strict
            else:
                hi, hi_c = bound, not strict
        elif j == k:  # var op bound
            bound, strict = right, op in "<>"
            if op.startswith("<"):
                hi, hi_c = bound, not strict
            else:
                lo, lo_c = bound, not strict
        else:
            return None
    return [(lo, lo_c, hi, hi_c)]


def _endpoint_equal(a: str, b: str) -> bool:
    a, b = a.replace(" ", ""), b.replace(" ", "")
    if "oo" in (a.lstrip("+-"), b.lstrip("+-")):
        return a.lstrip("+") == b.lstrip("+")
    return _scalar_equal(a, b)


def _intervals_equal(xs, ys) -> bool:
    mx, my = _merged(xs), _merged(ys)
    if mx is not None and my is not None:  # (1, 2] U [2, 3) is (1, 3)
        return len(mx) == len(my) and all(
            a[1] == b[1] and a[3] == b[3] and all(u == v or (abs(u) != math.inf and abs(v) != math.inf and _numbers_close(u, v))
                                                for u, v in ((a[0], b[0]), (a[2], b[2]))) for a, b in zip(mx, my))
    if len(xs) != len(ys):
        return False
    left = list(ys)
    for x in xs:
        for k, y in enumerate(left):
            if x[1] == y[1] and x[3] == y[3] and _endpoint_equal(x[0], y[0]) and _endpoint_equal(x[2], y[2]):
                del left[k]
                break
        else:
            return False
    return True


def _unordered_equal(xs, ys) -> bool:
    if len(xs) != len(ys):
        return False
    left = list(ys)
    for x in xs:
        for k, y in enumerate(left):
            if _nodes_equal(x, y):
                del left[k]
                break
        else:
            return False
    return True


def _flat(node):
    """The entries of a vector-like node (a one-row or one-column matrix, a tuple, a list), in order."""
    if node[0] == "matrix":
        rows = node[1]
        if len(rows) == 1:
            return rows[0]
        if all(len(r) == 1 for r in rows):
            return tuple(r[0] for r in rows)
        return None
    if node[0] == "seq":
        return node[3]
    if node[0] == "list":
        return node[1]
    return None


def _difference_ratio(a, b):
    """(lhs - rhs) of relation a over (lhs - rhs) of relation b, at random points: the constant ratio
    (a Fraction or float), 0 when both differences vanish everywhere, or None (not a constant, or undecided)."""
    da = "(%s)-(%s)" % (latex_to_python(a[0]), latex_to_python(a[1]))
    db = "(%s)-(%s)" % (latex_to_python(b[0]), latex_to_python(b[1]))
    return _tree_ratio(ast.parse(da, mode="eval"), ast.parse(db, mode="eval"))


def _tree_ratio(ta, tb):
    """ta / tb at random points: the constant ratio, 0 when both vanish everywhere, or None."""
    names = sorted(_variables(ta, tb))
    rng = random.Random(7)
    ratio = None
    seen = zeros = 0
    for _ in range(30):
        env = {n: Fraction(rng.randint(-60, 60), rng.randint(1, 9)) for n in names}
        try:
            va, vb = _eval(ta, env), _eval(tb, env)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            continue
        if _numbers_close(vb, 0):
            if not _numbers_close(va, 0):
                return None
            zeros += 1
            continue
        r = va / vb
        if ratio is None:
            if _numbers_close(r, 0):
                return None
            ratio = r
        elif not _numbers_close(r, ratio):
            return None
        seen += 1
        if seen >= 6:
            return ratio
    if seen >= 3:
        return ratio
    return 0 if zeros >= 6 and seen == 0 else None


def _equation_equal(a, b) -> bool:
    """Two equations are equivalent when (lhs - rhs) of one is a non-zero constant multiple of the other's
    (or both hold everywhere)."""
    try:
        return _difference_ratio(a[1:], b[1:]) is not None
    except (ValueError, SyntaxError, RecursionError):
        return normalize(a[1] + "=" + a[2]).replace(" ", "") == normalize(b[1] + "=" + b[2]).replace(" ", "")


_ONE_RELATION = re.compile(r"^([^<>!=]+)(<=|>=|!=|<|>)([^<>!=]+)$")


def _relations_equal(a: str, b: str) -> bool:
    """``2 < 2x`` is ``x > 1``, ``a < b`` is ``b > a``, ``x != 2`` is ``x - 2 != 0``: one relation each side;
    inequalities as (greater - lesser) up to a positive constant factor with the same strictness,
    "not equal" up to a non-zero one."""
    ma, mb = _ONE_RELATION.match(a.replace(" ", "")), _ONE_RELATION.match(b.replace(" ", ""))
    if not ma or not mb:
        return False

    def oriented(m):  # (greater, lesser, strict) or (lhs, rhs, "!=")
        lhs, op, rhs = m.groups()
        if op == "!=":
            return lhs, rhs, "!="
        return (lhs, rhs, op == ">") if op.startswith(">") else (rhs, lhs, op == "<")

    ga, gb = oriented(ma), oriented(mb)
    if (ga[2] == "!=") != (gb[2] == "!=") or ga[2] != gb[2]:
        return False
    try:
        r = _difference_ratio(ga[:2], gb[:2])
    except (ValueError, SyntaxError, RecursionError):
        return False
    if r is None or r == 0:
        return False
    return ga[2] == "!=" or (not isinstance(r, complex) and r > 0)


def _nodes_equal(a, b) -> bool:
    ka, kb = a[0], b[0]
    if ka == "expr" and kb == "expr":
        return _scalar_equal(a[1], b[1])
    if ka == "choice" or kb == "choice":
        if ka == kb:
            return a[1] == b[1]
        other = b if ka == "choice" else a
        return other[0] == "expr" and other[1].strip("() ") == (a if ka == "choice" else b)[1]
    if ka == "matrix" and kb == "matrix":
        return len(a[1]) == len(b[1]) and all(len(r) == len(q) and all(_nodes_equal(x, y) for x, y in zip(r, q)) for r, q in zip(a[1], b[1]))
    if ka == "set" and kb == "set":  # sets: duplicates do not count
        return all(any(_nodes_equal(x, y) for y in b[1]) for x in a[1]) and all(any(_nodes_equal(x, y) for x in a[1]) for y in b[1])
    if {ka, kb} <= {"set", "list"}:
        return _unordered_equal(a[1], b[1])
    if {ka, kb} == {"set", "expr"}:  # {5} against 5
        st, ex = (a, b) if ka == "set" else (b, a)
        return len(st[1]) == 1 and _nodes_equal(st[1][0], ex)
    if ka == "seq" and kb == "seq":
        if (a[1], a[2]) != (b[1], b[2]) or len(a[3]) != len(b[3]):
            return False
        return all(_nodes_equal(x, y) for x, y in zip(a[3], b[3]))
    if ka == "eq" and kb == "eq":
        return _equation_equal(a, b)
    if {"union", "rel", "and", "inter"} & {ka, kb}:
        ia, ib = _interval_parts(a), _interval_parts(b)
        if ia is not None and ib is not None and _one_relation_variable(a) and _one_relation_variable(b):
            return _intervals_equal(ia, ib)
        if ka == "rel" and kb == "rel":
            return a[1].replace(" ", "") == b[1].replace(" ", "") or (
                (ia is None or ib is None) and _relations_equal(a[1], b[1]))
        return False
    if "matrix" in (ka, kb) or {ka, kb} == {"list", "seq"}:  # a vector against a tuple or a list: in order
        fa, fb = _flat(a), _flat(b)
        return fa is not None and fb is not None and len(fa) == len(fb) and all(_nodes_equal(x, y) for x, y in zip(fa, fb))
    return False


_BOOLEANS = {"yes": "true", "true": "true", "no": "false", "false": "false"}


def _scalar_equal(a: str, b: str) -> bool:
    a, b = a.strip(), b.strip()
    ca, cb = a.replace(" ", ""), b.replace(" ", "")
    if ca == cb:
        return True
    if not ca or not cb:
        return False
    if re.fullmatch(r"[A-Za-z][A-Za-z ]*", a) and re.fullmatch(r"[A-Za-z][A-Za-z ]*", b):
        la, lb = a.lower(), b.lower()
        la, lb = _BOOLEANS.get(la, la), _BOOLEANS.get(lb, lb)
        if la == lb and len(ca) > 1:  # words: "White" is "white", "no" is "false"
            return True
        if max(len(ca), len(cb)) > 3 or {la, lb} & {"true", "false"}:
            return False  # different words; short ones (xy, abc) are still compared as products below
    na, nb = parse_number(a), parse_number(b)
    if na is not None and nb is not None:
        if na == nb:
            return True
        # "25%" against "25": a percentage also compares by its number
        if ca.endswith("%") != cb.endswith("%"):
            ra = parse_number(a[:-1]) if ca.endswith("%") else na
            rb = parse_number(b[:-1]) if cb.endswith("%") else nb
            return ra == rb
        return _numbers_close(na, nb)
    if ca.endswith("%") or cb.endswith("%"):
        return _scalar_equal(a.rstrip("%").strip(), b.rstrip("%").strip())
    va = na if na is not None else value_of(a)
    vb = nb if nb is not None else value_of(b)
    if va is not None and vb is not None:
        return _numbers_close(va, vb)
    if va is None or vb is None:  # 2^{2^{20}} against 4^{2^{19}}: too large to evaluate, compared by prime exponents
        r = _power_products_equal(a, b)
        if r is not None:
            return r
    r = expressions_equal(a, b)
    if r is not None:
        return r
    return bool(_sympy_equal(a, b))


# ----------------------------------------------------------------------------- equations and solution sets
#
# Polynomials in one variable t are lists of Fractions, lowest degree first, without trailing zeros (the
# zero polynomial is []). Everything here is bounded: degree at most _MAX_DEGREE, coefficients of at most
# _MAX_BITS bits, a fixed number of bisection steps; past a bound the rule declines (ValueError).

_MAX_DEGREE = 24
_MAX_BITS = 4000
_SOLVE_DEGREE = 12  # real roots are isolated for polynomials up to this degree
SOLVE_BUDGET_S = 0.5  # and within this time per comparison
_solving = threading.local()


def _within_budget():
    if time.monotonic() > getattr(_solving, "deadline", math.inf):
        raise ValueError("solving took too long")


def _p_trim(p):
    while p and p[-1] == 0:
        p.pop()
    return p


def _p_add(p, q):
    return _p_trim([(p[k] if k < len(p) else 0) + (q[k] if k < len(q) else 0) for k in range(max(len(p), len(q)))])


def _p_neg(p):
    return [-c for c in p]


def _p_mul(p, q):
    if not p or not q:
        return []
    if len(p) + len(q) - 2 > _MAX_DEGREE:
        raise ValueError("degree too large")
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                out[i + j] += a * b
    if any(c.numerator.bit_length() + c.denominator.bit_length() > _MAX_BITS for c in out):
        raise ValueError("coefficients too large")
    return _p_trim(out)


def _p_divmod(p, q):
    if not q:
        raise ZeroDivisionError("division by the zero polynomial")
    rem, quo = list(p), [Fraction(0)] * max(len(p) - len(q) + 1, 0)
    while rem and len(rem) >= len(q):
        k, c = len(rem) - len(q), rem[-1] / q[-1]
        quo[k] = c
        for j, b in enumerate(q):
            rem[k + j] -= c * b
        rem.pop()
        _p_trim(rem)
    return _p_trim(quo), rem


def _p_monic(p):
    return [c / p[-1] for c in p] if p else []


def _p_gcd(p, q):
    while q:
        p, q = q, _p_divmod(p, q)[1]
    return _p_monic(p)


def _p_eval(p, x):
    v = 0
    for c in reversed(p):
        v = v * x + c
    return v


def _p_sqfree(p):
    """p without repeated factors, monic."""
    return _p_monic(_p_divmod(p, _p_gcd(p, [k * c for k, c in enumerate(p)][1:]))[0])


def _ratfun(node, var_polys):
    """A parsed expression as (numerator, denominator) polynomials in t, its names replaced by the polynomials
    ``var_polys`` (exact; ValueError when it is not a rational function with rational coefficients)."""
    if isinstance(node, ast.Expression):
        node = node.body
    if not (_variables(node) & set(var_polys)):  # a constant: sqrt(4), 3!, 2^10
        v = _eval(node, {})
        if not isinstance(v, Fraction):
            raise ValueError("not a rational constant")
        return ([v] if v else []), [Fraction(1)]
    if isinstance(node, ast.Name):
        return list(var_polys[node.id]), [Fraction(1)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        n, d = _ratfun(node.operand, var_polys)
        return (_p_neg(n) if isinstance(node.op, ast.USub) else n), d
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        if _variables(node.right) & set(var_polys):
            raise ValueError("variable exponent")
        k = _eval(node.right, {})
        if not (isinstance(k, Fraction) and k.denominator == 1 and abs(k) <= _MAX_DEGREE):
            raise ValueError("unsupported exponent")
        n, d = _ratfun(node.left, var_polys)
        pn, pd = [Fraction(1)], [Fraction(1)]
        for _ in range(abs(int(k))):
            pn, pd = _p_mul(pn, n), _p_mul(pd, d)
        if k < 0:
            pn, pd = pd, pn
        if not pd:
            raise ZeroDivisionError("division by zero")
        return pn, pd
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        ln, ld = _ratfun(node.left, var_polys)
        rn, rd = _ratfun(node.right, var_polys)
        if isinstance(node.op, ast.Mult):
            return _p_mul(ln, rn), _p_mul(ld, rd)
        if isinstance(node.op, ast.Div):
            if not rn:
                raise ZeroDivisionError("division by zero")
            return _p_mul(ln, rd), _p_mul(ld, rn)
        if isinstance(node.op, ast.Sub):
            rn = _p_neg(rn)
        if ld == rd:
            return _p_add(ln, rn), ld
        return _p_add(_p_mul(ln, rd), _p_mul(rn, ld)), _p_mul(ld, rd)
    raise ValueError("not a rational function")


def _reduced_numerator(tree, var_polys):
    """The numerator of a rational function in lowest terms, monic ([] for zero)."""
    num, den = _ratfun(tree, var_polys)
    return _p_monic(_p_divmod(num, _p_gcd(num, den))[0]) if num else []


def _equation_alternatives(s: str):
    """``L1 = R1 or L2 = R2`` (``x = \\pm 2`` counts as two) as [(L, R)], ``|A| = |B|`` as ``A^2 = B^2``;
    None when s is not such a disjunction."""
    out = []
    for part in _split_top(s, " or "):
        if not part or _RELATION.search(part):
            return None
        for q in _expand_pm([part]):
            sides = _split_top(q, "=")
            if len(sides) != 2 or not all(sides):
                return None
            a, b = _abs_argument(sides[0]), _abs_argument(sides[1])
            out.append(("(%s)^2" % a, "(%s)^2" % b) if a is not None and b is not None else tuple(sides))
    return out if 0 < len(out) <= 8 else None


def _abs_argument(s: str) -> Optional[str]:
    """A in ``|A|`` or ``abs(A)`` when that is all of s."""
    s = s.strip()
    at = _abs_at(s)
    return at[2] if at is not None and at[0] == 0 and at[1] == len(s) else None


def _equation_sets_equal(a: str, b: str) -> bool:
    """Equations and disjunctions of equations, each side as the one equation "product of (lhs - rhs) = 0":
    ``x = 2 or x = -2`` is ``x^2 = 4`` and ``a = 0 or b = 0`` is ``ab = 0``; roots keep their multiplicity
    (``(x-2)^2 = 0`` is not ``x = 2``). Equal when the products are constant multiples of each other
    (random points), or when their numerators in lowest terms are (exactly, on random lines: so
    ``1/x + 1/y = 2`` is ``y = x/(2x-1)``); ``|A| = |B|`` is ``A^2 = B^2``."""
    ea, eb = _equation_alternatives(a), _equation_alternatives(b)
    if ea is None or eb is None:
        return False
    try:
        ta, tb = (ast.parse("*".join("((%s)-(%s))" % (latex_to_python(l), latex_to_python(r)) for l, r in e), mode="eval")
                  for e in (ea, eb))
        if _tree_ratio(ta, tb) is not None:
            return True
        names = sorted(_variables(ta, tb))
        if not names or len(names) > 6:
            return False
        rng = random.Random(11)
        for _ in range(1 if len(names) == 1 else 3):  # one variable: the polynomials themselves
            line = {names[0]: [Fraction(0), Fraction(1)]} if len(names) == 1 else {
                n: [Fraction(rng.randint(-30, 30), rng.randint(1, 7)), Fraction(rng.choice((-1, 1)) * rng.randint(1, 9), rng.randint(1, 5))]
                for n in names}
            if _reduced_numerator(ta, line) != _reduced_numerator(tb, line):
                return False
        return True
    except (ValueError, ZeroDivisionError, SyntaxError, OverflowError, TypeError, RecursionError):
        return False


# Solution sets of one real variable: each side a formula of relations joined by "and"/"or" (with
# parentheses); the real line is cut at every root and pole of every relation of both sides, and the two
# formulas must agree at each cut point and inside each piece between them.

_REL_OPS = ("<=", ">=", "!=", "<", ">", "=")


def _split_relations(s: str):
    """``-1 < x <= 3`` -> (["-1", "x", "3"], ["<", "<="]) at the top level."""
    terms, ops, depth, cur, i = [], [], 0, "", 0
    while i < len(s):
        ch = s[i]
        depth += ch in "([{"
        depth -= ch in ")]}"
        op = next((o for o in _REL_OPS if s.startswith(o, i)), None) if depth == 0 else None
        if op:
            terms.append(cur.strip())
            ops.append(op)
            cur, i = "", i + len(op)
            continue
        cur += ch
        i += 1
    terms.append(cur.strip())
    return terms, ops


def _formula(s: str, depth: int = 0):
    """("or"|"and", parts) or ("rel", lhs, op, rhs); None when s is not a formula of relations."""
    s = s.strip()
    while s.startswith("(") and _closing(s, 0) == len(s) - 1:
        s = s[1:-1].strip()
    if depth > 8 or not s:
        return None
    for joiner in (" or ", " and "):
        parts = _split_top(s, joiner)
        if len(parts) > 1:
            got = [_formula(p, depth + 1) for p in parts]
            return None if None in got else (joiner.strip(), got)
    terms, ops = _split_relations(s)
    if not ops or not all(terms):
        return None
    rels = [_without_abs(terms[k], terms[k + 1], ops[k]) for k in range(len(ops))]
    return rels[0] if len(rels) == 1 else ("and", rels)


def _abs_at(s: str):
    """(start, end, argument) of the first ``|A|`` or ``abs(A)`` in s, or None."""
    i = s.find("abs(")
    if i != -1 and _closing(s, i + 3) != -1:
        return i, _closing(s, i + 3) + 1, s[i + 4:_closing(s, i + 3)]
    i = s.find("|")
    j = s.find("|", i + 1)
    if i != -1 and j != -1 and s.count("|") == 2:
        return i, j + 1, s[i + 1:j]
    return None


def _without_abs(lhs: str, rhs: str, op: str, depth: int = 0):
    """A relation with ``|A|`` as two cases: ``|x - 1| < 2`` is (x - 1 >= 0 and x - 1 < 2) or
    (x - 1 < 0 and -(x - 1) < 2)."""
    for side in (0, 1):
        term = (lhs, rhs)[side]
        at = _abs_at(term) if depth < 3 else None
        if at is None:
            continue
        start, end, arg = at
        cases = []
        for cond, repl in ((">=", "(%s)" % arg), ("<", "(-(%s))" % arg)):
            t = term[:start] + repl + term[end:]
            pair = (t, rhs) if side == 0 else (lhs, t)
            cases.append(("and", [("rel", arg, cond, "0"), _without_abs(pair[0], pair[1], op, depth + 1)]))
        return ("or", cases)
    return ("rel", lhs, op, rhs)


def _interval_formula(s: str, var: str):
    """An interval or a union of intervals with numeric endpoints as a formula in ``var``; None otherwise."""
    node = _parse(_strip_lhs(s))
    if node[0] not in ("seq", "union", "inter"):
        return None
    parts = _interval_parts(node)
    if not parts:
        return None
    pieces = []
    for lo, lo_closed, hi, hi_closed in parts:
        rels = []
        if lo.replace(" ", "") != "-oo":
            rels.append(("rel", var, ">=" if lo_closed else ">", lo))
        if hi.replace(" ", "").lstrip("+") != "oo":
            rels.append(("rel", var, "<=" if hi_closed else "<", hi))
        pieces.append(("and", rels) if rels else ("rel", "0", "=", "0"))
    return ("or", pieces)


def _relations(f):
    return [f] if f[0] == "rel" else [r for p in f[1] for r in _relations(p)]


def _formula_variables(rels) -> Optional[set]:
    try:
        return {n for r in rels for t in (r[1], r[3]) for n in _variables(ast.parse(latex_to_python(t), mode="eval"))}
    except (ValueError, SyntaxError, RecursionError):
        return None


def _p_primitive(p):
    """p times a positive rational: integer coefficients without a common factor (the same signs everywhere)."""
    den = 1
    for c in p:
        den = den * c.denominator // math.gcd(den, c.denominator)
    ints = [int(c * den) for c in p]
    g = 0
    for c in ints:
        g = math.gcd(g, c)
    return [c // g for c in ints] if g else []


def _p_sign(p, x: Fraction) -> int:
    """The sign of the integer polynomial p at x, in integer arithmetic."""
    n, d = x.numerator, x.denominator
    v, dk = 0, 1
    for c in reversed(p):  # sum c_k n^k d^(deg-k)
        v = v * n + c * dk
        dk *= d
    return (v > 0) - (v < 0)


def _real_roots(p):
    """The distinct real roots of a polynomial: Fractions when rational, else floats (Sturm sequences and
    bisection on exact rationals; ValueError past _SOLVE_DEGREE or the time budget)."""
    s = _p_sqfree(p)
    if len(s) <= 1:
        return []
    if len(s) == 2:
        return [-s[0]]
    if len(s) > _SOLVE_DEGREE + 1:
        raise ValueError("degree too large to solve")
    seq = [s, _p_monic([k * c for k, c in enumerate(s)][1:])]
    while len(seq[-1]) > 1:
        _within_budget()
        rem = _p_divmod(seq[-2], seq[-1])[1]
        if not rem:
            break
        seq.append([c / abs(rem[-1]) for c in _p_neg(rem)])
    seq = [_p_primitive(q) for q in seq]

    def changes(x):
        signs = [v > 0 for v in (_p_sign(q, x) for q in seq) if v != 0]
        return sum(1 for u, v in zip(signs, signs[1:]) if u != v)

    bound = 1 + max(abs(c) for c in s[:-1])
    roots, todo, steps = [], [(-bound, bound, changes(-bound) - changes(bound))], 0
    while todo:
        lo, hi, n = todo.pop()
        steps += 1
        if steps > 400:
            raise ValueError("roots too close together")
        _within_budget()
        if n == 1:
            roots.append(_bisect_root(seq[0], lo, hi))
        elif n > 1:
            mid = (lo + hi) / 2
            cm = changes(mid)
            todo += [(lo, mid, changes(lo) - cm), (mid, hi, cm - changes(hi))]
    return roots


def _bisect_root(s, lo, hi):
    """The one root of the square-free integer polynomial s in (lo, hi]."""
    at_hi = _p_sign(s, hi)
    if at_hi == 0:
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        v = _p_sign(s, mid)
        if v == 0:
            return mid
        if v == at_hi:
            hi = mid
        else:
            lo = mid
        if hi - lo < Fraction(1, 10 ** 18) * max(1, abs(lo)):
            break
    guess = ((lo + hi) / 2).limit_denominator(10 ** 9)
    return guess if _p_sign(s, guess) == 0 else float((lo + hi) / 2)


class _Relation:
    """lhs - rhs of one relation in the variable: exact (num/den polynomials) or, with irrational
    coefficients, linear (a*x + b, as in ``x > \\sqrt2``)."""

    def __init__(self, lhs, rhs, op, var):
        self.op = op
        tree = ast.parse("(%s)-(%s)" % (latex_to_python(lhs), latex_to_python(rhs)), mode="eval")
        if _variables(tree) - {var}:
            raise ValueError("another variable")
        self.poly = None
        try:
            self.poly = _ratfun(tree, {var: [Fraction(0), Fraction(1)]})
            self.integral = (_p_primitive(self.poly[0]), _p_primitive(self.poly[1]))
            self.points = [(r, self.poly[0]) for r in _real_roots(self.poly[0])] + [(r, self.poly[1]) for r in _real_roots(self.poly[1])]
            return
        except ZeroDivisionError:
            raise ValueError("undefined")
        except ValueError:
            pass
        b = _eval(tree, {var: Fraction(0)})
        a = _eval(tree, {var: Fraction(1)}) - b
        if isinstance(a, complex) or isinstance(b, complex) or not all(
                _numbers_close(_eval(tree, {var: x}), a * x + b) for x in (Fraction(7, 3), Fraction(-5, 2), Fraction(41))):
            raise ValueError("not linear")
        self.a, self.b = float(a), float(b)
        if self.a == 0:
            raise ValueError("constant")
        root = -self.b / self.a
        snapped = Fraction(root).limit_denominator(10 ** 6)
        self.root = snapped if abs(float(snapped) - root) <= 1e-12 * max(1.0, abs(root)) else root
        self.points = [(self.root, None)]

    def sign(self, x, owners=()):
        """The sign of lhs - rhs at x (a Fraction, or a float root of the polynomials ``owners``); None
        where it is undefined."""
        if self.poly is None:
            if isinstance(x, float) and abs(x - self.root) <= 1e-10 * max(1.0, abs(x)):
                return 0
            v = self.a * (float(x) - float(self.root))
            return (v > 0) - (v < 0)
        num, den = self.poly
        if isinstance(x, Fraction):
            d = _p_sign(self.integral[1], x)
            return None if d == 0 else _p_sign(self.integral[0], x) * d
        if self._vanishes(den, x, owners):
            return None
        if self._vanishes(num, x, owners):
            return 0
        v = _p_eval(num, x) * _p_eval(den, x)
        return (v > 0) - (v < 0)

    @staticmethod
    def _vanishes(p, x, owners):
        if not owners:  # a point only a linear relation has: within rounding
            scale = sum(abs(float(c)) * abs(x) ** k for k, c in enumerate(p))
            return abs(_p_eval(p, x)) <= 1e-9 * max(scale, 1e-300)
        for owner in owners:
            g = _p_gcd(p, owner)
            if len(g) > 1 and any(isinstance(r, float) and abs(r - x) <= 1e-10 * max(1.0, abs(x)) for r in _real_roots(g)):
                return True
        return False

    def holds(self, x, owners=()):
        s = self.sign(x, owners)
        if s is None:
            return False
        return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "=": s == 0, "!=": s != 0}[self.op]


def _formula_holds(f, truth):
    if f[0] == "rel":
        return truth[id(f)]
    results = [_formula_holds(p, truth) for p in f[1]]
    return any(results) if f[0] == "or" else all(results)


def _solution_sets_equal(a: str, b: str) -> bool:
    """Relations of one variable joined by "and"/"or" (``x^2 > 4``, ``x < -2 or x > 2``,
    ``(x < 0 or x >= 1) and x <= 3``, ``x \\ne 2``), compared as the sets of real numbers where they hold
    (the points where a side is undefined excluded). Only when a side has an inequality: equations alone
    are ``_equation_sets_equal``'s."""
    _solving.deadline = time.monotonic() + SOLVE_BUDGET_S
    try:
        return _solution_sets_agree(a, b)
    finally:
        _solving.deadline = math.inf


def _solution_sets_agree(a: str, b: str) -> bool:
    fa, fb = _formula(a), _formula(b)
    if (fa is None) == (fb is None):
        if fa is None:
            return False
    else:  # x^2 >= 4 against (-oo, -2] U [2, oo)
        names = _formula_variables(_relations(fa or fb))
        if names is None or len(names) != 1:
            return False
        fa, fb = fa or _interval_formula(a, next(iter(names))), fb or _interval_formula(b, next(iter(names)))
        if fa is None or fb is None:
            return False
    rels = _relations(fa) + _relations(fb)
    if not any(r[2] != "=" for r in rels) or len(rels) > 24:
        return False
    try:
        names = _formula_variables(rels)
        if names is None or len(names) != 1:
            return False
        var = names.pop()
        built = {id(r): _Relation(r[1], r[3], r[2], var) for r in rels}
        points = {}  # value -> polynomials it is a root of
        for rel in built.values():
            for x, owner in rel.points:
                points.setdefault(x, [])
                if owner is not None:
                    points[x].append(owner)
        merged = []  # exact points stay apart; float roots within rounding are one point
        for x in sorted(points, key=float):
            if merged and isinstance(x, float) and isinstance(merged[-1][0], float) and abs(x - merged[-1][0]) <= 1e-10 * max(1.0, abs(x)):
                merged[-1][1].extend(points[x])
                continue
            merged.append((x, list(points[x])))
        cuts = [(x, owners) for x, owners in merged]
        values = [Fraction(x) if isinstance(x, float) else x for x, _ in merged]
        samples = [(v + w) / 2 for v, w in zip(values, values[1:])]
        samples += [values[0] - 1, values[-1] + 1] if values else [Fraction(0)]
        for x, owners in cuts + [(s, ()) for s in samples]:
            _within_budget()
            truth = {k: rel.holds(x, owners) for k, rel in built.items()}
            if _formula_holds(fa, truth) != _formula_holds(fb, truth):
                return False
        return True
    except (ValueError, ZeroDivisionError, SyntaxError, OverflowError, TypeError, RecursionError):
        return False


def is_equiv(pred: Optional[str], truth: Optional[str]) -> bool:
    """Is the predicted answer equivalent to the ground-truth answer?

    math_verify decides first when it is importable (a "yes" from it stands); otherwise, or when it says
    no, the template's own checks: structure (sets and answer lists unordered, tuples and intervals
    ordered, matrices, unions of intervals, inequalities as intervals, equations up to a constant
    factor), then numbers and expressions (exact rationals, random points, sympy when importable).
    """
    if pred is None or truth is None:
        return False
    if any(len(str(x)) > MAX_ANSWER_CHARS and not (len(str(x)) <= MAX_NUMBER_CHARS and _PLAIN_NUMBER.fullmatch(str(x)))
           for x in (pred, truth)):
        return False
    if _math_verify_equal(str(pred), str(truth)):
        return True
    a, b = normalize(pred), normalize(truth)
    if not a or not b:
        return False
    if a == b:
        return True
    try:
        if _nodes_equal(_parse(_strip_lhs(a)), _parse(_strip_lhs(b))):
            return True
        pa, pb = _parse(a), _parse(b)  # y = 1 - x against x + y = 1: both equations, compared as such
        if pa[0] == pb[0] == "eq" and (_strip_lhs(a) != a or _strip_lhs(b) != b) and _equation_equal(pa, pb):
            return True
        return _equation_sets_equal(a, b) or _solution_sets_equal(a, b)
    except RecursionError:
        return False

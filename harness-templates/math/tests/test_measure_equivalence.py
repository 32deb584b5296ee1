"""tools/measure_equivalence.py: case formats, notation translation, out-of-scope rows, both paths."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from measure_equivalence import maxima_to_latex  # noqa: E402

TOOL = os.path.join(ROOT, "tools", "measure_equivalence.py")


def run(doc, *args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cases.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = subprocess.run([sys.executable, TOOL, path, "--json", *args], capture_output=True, text=True, timeout=300)
    return r


class MeasureEquivalenceTest(unittest.TestCase):
    def test_maxima_notation_is_translated(self):
        self.assertEqual(maxima_to_latex("%pi/2+%e^(%i*x)"), "\\pi /2+e^(i*x)")
        self.assertEqual(maxima_to_latex("{1,x>4}"), "\\{1,x>4\\}")
        self.assertEqual(maxima_to_latex("[1,A[2]]"), "(1,A_{2})")
        self.assertEqual(maxima_to_latex("matrix([1,2],[3,4])"), "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}")
        self.assertEqual(maxima_to_latex("%union(oc(1,2),co(2,inf))"), "\\left(1, 2\\right] \\cup \\left[2, \\infty\\right)")
        self.assertEqual(maxima_to_latex("lg(8,2)+lg(x)"), "\\log_{2}(8)+\\log_{10}(x)")
        self.assertEqual(maxima_to_latex("x#pm#1 and y#2"), "x\\pm 1 and y\\ne 2")
        # sets inside rewritten calls are escaped once
        self.assertEqual(maxima_to_latex("matrix([x>4,{1,x^2}])"), "\\begin{pmatrix}x>4 & \\{1,x^2\\}\\end{pmatrix}")
        self.assertEqual(maxima_to_latex("%union({-1,1})"), "\\{-1,1\\}")

    def test_stack_rows_are_scored_with_their_own_verdicts(self):
        doc = {"source": {"repository": "example/cas-tests", "path": "page.md", "commit": "0" * 40}, "cases": [
            {"student": "x^(1/2)", "teacher": "sqrt(x)", "mark": 1},
            {"student": "(x-1)^2", "teacher": "x^2-2*x+1", "mark": 1},
            {"student": "2<2*x", "teacher": "x>1", "mark": 1},
            {"student": "x^3", "teacher": "x^2", "mark": 1},  # a wrong expected verdict is still scored as given
            {"student": "cos(x)", "teacher": "sin(x)", "mark": 0},
            {"student": "diff(x^2,x)", "teacher": "2*x", "mark": 1},
            {"student": "A and B", "teacher": "B and A", "mark": 1},
            {"student": "1/0", "teacher": "1", "mark": -1},
            {"student": "f(x):=x", "teacher": "f(y):=y", "mark": 1},
        ]}
        r = run(doc, "--mode", "stdlib", "--misses")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.assertEqual(res["verifier"], "stdlib")
        self.assertEqual((res["pos"], res["neg"], res["tp"], res["tn"]), (4, 1, 3, 1))
        self.assertAlmostEqual(res["balanced_accuracy"], (3 / 4 + 1) / 2)
        self.assertEqual([w["raw"] for w in res["wrong"]], [["x^3", "x^2"]])
        self.assertEqual(sum(res["out_of_scope"].values()), 4)
        self.assertEqual(res["rows"], 9)
        self.assertIn("example/cas-tests page.md @ " + "0" * 40, res["source"])

    def test_both_paths_and_the_plain_format(self):
        doc = {"cases": [{"a": "\\frac12", "b": "0.5", "equiv": True}, {"a": "\\sqrt3", "b": "1.732", "equiv": False}]}
        r = run(doc)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        self.assertEqual(lines[0]["mode"], "stdlib")
        self.assertEqual((lines[0]["tp"], lines[0]["tn"]), (1, 1))
        try:
            import sympy  # noqa: F401
            self.assertEqual([x["verifier"] for x in lines], ["stdlib", "sympy"])
        except ImportError:
            self.assertEqual(len(lines), 1)

    def test_plain_rows_with_an_out_of_scope_reason_are_counted_not_scored(self):
        doc = {"cases": [
            {"a": "x+x", "b": "2*x", "equiv": True},
            {"a": "x", "b": "y", "equiv": False},
            {"a": "expand((x+1)^2)", "b": "x^2+2*x+1", "equiv": True, "out_of_scope": "CAS command"},
            {"a": "ab", "b": "ba", "equiv": True, "out_of_scope": "form comparison"},
            {"a": "expand(x*(x+1))", "b": "x+x^2", "equiv": True, "out_of_scope": "CAS command"},
        ]}
        r = run(doc, "--mode", "stdlib")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.assertEqual((res["rows"], res["pos"], res["neg"], res["tp"], res["tn"]), (5, 1, 1, 1, 1))
        self.assertEqual(res["out_of_scope"], {"CAS command": 2, "form comparison": 1})

    def test_bad_input_says_where(self):
        r = run({"cases": [{"student": "x", "teacher": "x", "mark": 7}]}, "--mode", "stdlib")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("case 0 has mark 7", r.stderr)
        r = subprocess.run([sys.executable, TOOL, "/nonexistent/cases.json"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no such file", r.stderr)


if __name__ == "__main__":
    unittest.main()

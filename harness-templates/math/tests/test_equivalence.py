"""Answer equivalence: each notation the grader understands, with a near miss that must stay unequal.

Run from the harness root: python3 -m unittest
"""
import ast
import os
import sys
import time
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "reward"))

import math_grader  # noqa: E402
from compute_score import compute_score  # noqa: E402
from math_grader import is_equiv  # noqa: E402


class NotationTest(unittest.TestCase):
    def same(self, *forms):
        for a in forms:
            for b in forms:
                self.assertTrue(is_equiv(a, b), "%r vs %r" % (a, b))

    def differ(self, a, b):
        self.assertFalse(is_equiv(a, b), "%r vs %r" % (a, b))
        self.assertFalse(is_equiv(b, a), "%r vs %r" % (b, a))

    def test_fraction_spellings(self):
        self.same("\\frac13", "\\frac{1}{3}", "\\dfrac{1}{3}", "\\tfrac13", "\\frac1{3}", "\\frac{1}3", "1/3", "\\\\frac{1}{3}", "\\frac {1}{3}")
        self.differ("\\frac13", "\\frac14")
        self.differ("\\frac13", "0.333")

    def test_mixed_numbers(self):
        self.same("1\\frac12", "1 1/2", "1.5", "\\frac{3}{2}")
        self.same("918\\frac{1}{2}", "918.5")
        self.differ("1\\frac12", "\\frac12")

    def test_left_right_and_spacing(self):
        self.same("\\left( 1, \\frac12 \\right)", "(1,0.5)", "(1,\\!\\ \\frac{1}{2})")
        self.same("\\left[0, 1\\right)", "[0,1)")
        self.same("\\bigl( 1, 2 \\bigr)", "\\Big(1,2\\Big)", "(1, 2)")
        self.same("\\left| -3 \\right|", "|-3|", "3")
        self.differ("\\left( 1, \\frac12 \\right)", "(0.5, 1)")

    def test_units_and_text_wrappers(self):
        self.same("5\\text{ meters}", "5 meters", "5", "\\mbox{5}")
        self.same("10\\text{ cm}^2", "10\\text{ cm}^{2}", "10 square units", "10")
        self.same("\\text{odd}", "odd", "\\mathrm{odd}", "\\textsf{odd}", "\\emph{odd}")
        self.same("B", "\\mathcal{B}", "\\mathsf{B}", "\\texttt{B}")
        self.differ("\\mathcal{B}", "C")
        self.same("17\\text{ any words}", "17")
        self.same("90^\\circ", "90", "90^{\\circ}")
        self.differ("5\\text{ meters}", "6")
        self.differ("\\text{odd}", "\\text{oddd}")

    def test_percent(self):
        self.same("50 percent", "50\\%", "50%")
        self.assertTrue(is_equiv("50 percent", "0.5"))
        self.assertTrue(is_equiv("50\\%", "50"))
        self.differ("50 percent", "5")

    def test_thousands_separators_with_decimals(self):
        self.same("1,000.99", "1000.99", "1{,}000.99")
        self.same("\\$23{,}000", "23000", "23,000 dollars")
        self.differ("1,000.99", "1000.9")
        self.differ("1,000", "1")

    def test_digits_grouped_with_a_negative_space(self):
        self.same("56,\\!01,\\!78,\\!95,\\!760", "56017895760")
        self.same("11,\\! 111,\\! 111,\\! 100", "11111111100", "11,111,111,100")
        self.differ("56,\\!01,\\!78", "5601780")
        self.differ("56, 01, 78", "560178")  # without the negative space: a list

    def test_intervals(self):
        self.same("[0,1)", "[0, 1)", "\\left[0,1\\right)", "x \\in [0,1)")
        self.differ("[0,1)", "[0,1]")
        self.differ("[0,1)", "(0,1)")
        self.same("(-\\infty,0)\\cup(0,\\infty)", "(0,\\infty)\\cup(-\\infty,0)", "(-\\infty, 0) \\cup (0, +\\infty)")
        self.differ("(-\\infty,0)\\cup(0,\\infty)", "(-\\infty,0]\\cup(0,\\infty)")

    def test_sets_are_unordered_and_tuples_ordered(self):
        self.same("\\{1\\pm\\sqrt5,-2\\}", "\\{-2,1+\\sqrt5,1-\\sqrt{5}\\}", "\\left\\{ -2, 1 - \\sqrt{5}, 1 + \\sqrt{5} \\right\\}")
        self.differ("\\{1\\pm\\sqrt5,-2\\}", "\\{-2,1+\\sqrt5\\}")
        self.same("\\{3,1,2\\}", "\\{1,2,3\\}", "\\{1,2\\} \\cup \\{3\\}")
        self.differ("\\{1,2\\} \\cup \\{3\\}", "\\{1,2\\}")
        self.same("\\{1,2,2\\}", "\\{2,1\\}")
        self.same("\\langle 1, 2 \\rangle", "(1,2)")
        self.differ("(1,2)", "(2,1)")
        self.differ("(1,2,3)", "[1,2,3]")

    def test_answer_lists_are_unordered(self):
        self.same("1, 3, 2", "3, 2, 1", "1,2,3")
        self.same("7, -2, \\text{ and } -5", "-5,-2,7")
        self.same("1\\pm\\sqrt2", "1+\\sqrt2, 1-\\sqrt2")
        self.differ("1, 2", "1, 2, 3")
        self.differ("1, 2, 2", "1, 1, 2")

    def test_inequalities_both_ways(self):
        self.same("x \\geq 5", "5 \\leq x", "x\\ge5", "[5, \\infty)")
        self.same("-1 < x \\le 3", "3 \\geq x > -1", "(-1, 3]")
        self.differ("x > 5", "[5, \\infty)")
        self.differ("x \\geq 5", "x \\leq 5")

    def test_inequalities_up_to_a_positive_factor(self):
        self.same("2 < 2x", "x > 1", "-2 > -2x", "1 < x")
        self.same("a < b", "b > a")
        self.same("3x^2 < 9a", "x^2 - 3a < 0")
        self.same("2x \\geq x^2", "x^2 \\le 2x")
        self.differ("2 < 2x", "x < 1")     # the factor must be positive
        self.differ("2 < 2x", "x \\geq 1")  # and the strictness the same
        self.differ("3x^2 < 9a", "x^2 - 3a > 0")
        self.differ("x^4 \\geq 16", "x^2 \\geq 3")

    def test_not_equal_up_to_a_factor(self):
        self.same("x \\ne 2", "x - 2 \\neq 0", "2 \\ne x", "x \\neq 1 + 1")
        self.differ("x \\ne 2", "x \\ne 3")
        self.differ("x \\ne 2", "x = 2")

    def test_compound_inequalities_and_overlapping_intervals(self):
        self.same("x > 1 \\text{ and } x < 5", "5 > x \\text{ and } 1 < x", "(1, 5)", "1 < x < 5")
        self.same("(1, 2] \\cup [2, 3)", "(1, 3)")
        self.same("(-\\infty, 0] \\cup (-1, 4)", "(-\\infty, 4)")
        self.same("(-\\infty, 1) \\cup (-1, \\infty)", "(-\\infty, \\infty)")
        self.same("x \\ge 1 \\text{ or } 1 \\le x", "x \\ge 1")
        self.differ("x > 1 \\text{ and } x < 5", "(1, 5]")
        self.differ("(1, 2) \\cup (2, 3)", "(1, 3)")  # 2 is left out
        self.differ("(1, 2] \\cup [2, 3)", "(1, 3]")
        self.differ("(1, 2] \\cup [2.5, 3)", "(1, 3)")

    def test_var_prefixes(self):
        self.same("x = 5", "5", "x=5")
        self.same("f(x) = 2x + 3", "2x+3", "y = 3 + 2x")
        self.same("x = 1, y = 2, z = 3", "1, 2, 3")
        self.same("a_3 = 2", "2", "2 = a_3")
        self.differ("x = 5", "6")

    def test_equations_up_to_a_constant_factor(self):
        self.same("x^2 - 1 = 0", "2x^2 - 2 = 0", "0 = 1 - x^2")
        self.differ("5x - 7y + 11z + 4 = 0", "x + y - z + 2 = 0")
        self.differ("\\sin(x)=\\frac{42}{59}", "\\cos(x)=\\frac{42}{59}")
        # two equations stay equations even with a single name on one side
        self.same("x + y = 1", "y = 1 - x", "2x + 2y = 2")
        self.same("y = \\sin(2x)", "\\frac{y}{2} = \\cos(x)\\sin(x)")
        self.same("a(2+i) = b", "a = \\frac{b(2-i)}{5}")
        self.differ("x + y = 1", "y = 1 + x")
        self.differ("a(2+i) = b", "a = \\frac{b(2-i)}{4}")
        # a system: its lines in any order, each up to a factor
        self.same("\\begin{cases} a+b=\\frac12 \\\\ a-b=\\sqrt3 \\end{cases}", "\\begin{cases} a-b=\\sqrt{3} \\\\ 2a+2b=1 \\end{cases}")
        self.differ("\\begin{cases} a+b=1 \\\\ a-b=2 \\end{cases}", "\\begin{cases} a+b=1 \\\\ a-b=3 \\end{cases}")

    def test_equation_sets(self):
        # a disjunction of equations is one equation, the product of the side differences
        self.same("x^2 = 4", "x = 2 \\text{ or } x = -2", "x = \\pm 2", "x = -2 \\text{ or } x = 2")
        self.differ("x^2 = 4", "x = 2")
        self.same("x^2 - 3x + 2 = 0", "x = 1 \\text{ or } x = 2")
        self.differ("x^2 - 3x + 2 = 0", "x = 1 \\text{ or } x = 3")
        self.same("x^2 = 2", "x = \\pm\\sqrt{2}")
        self.differ("x^2 = 2", "x = \\pm 1.414")  # a rounded decimal is not its irrational
        self.same("a = 0 \\text{ or } b = 0", "ab = 0")
        self.same("ax = ay", "a = 0 \\text{ or } x = y")
        self.differ("ax = ay", "x = y")
        # roots keep their multiplicity
        self.differ("(x-2)^2 = 0", "x = 2")
        self.differ("a^3 b^3 = 0", "ab = 0")
        # sides in lowest terms: a denominator does not count
        self.same("\\frac{1}{x} + \\frac{1}{y} = 2", "y = \\frac{x}{2x-1}")
        self.differ("\\frac{1}{x} + \\frac{1}{y} = 2", "y = \\frac{x}{2x+1}")
        self.same("\\frac{x^2-1}{x-1} = 0", "x = -1")
        self.differ("\\frac{x^2-1}{x-1} = 0", "x = 1 \\text{ or } x = -1")
        # |A| = |B| is A^2 = B^2
        self.same("|x| = |y|", "x = y \\text{ or } x = -y", "(x-y)(x+y) = 0")
        self.differ("|x| = |y|", "x = y")

    def test_solution_sets_of_one_variable(self):
        self.same("x^2 > 4", "x > 2 \\text{ or } x < -2", "(-\\infty, -2) \\cup (2, \\infty)")
        self.differ("x^2 > 4", "x \\ge 2 \\text{ or } x \\le -2")
        self.same("x^2 < 4", "x < 2 \\text{ and } x > -2", "(-2, 2)")
        self.differ("x^2 < 4", "[-2, 2]")
        self.same("x^4 \\geq 16", "x^2 \\geq 4")
        self.same("x^4 \\geq 0", "x^2 \\geq 0")
        self.differ("x^4 \\geq 16", "x^2 \\geq 3")
        self.same("x^3 > 8", "x > 2")
        self.differ("x^3 \\ge 8", "x > 2")
        self.same("x^2 > 2", "x > \\sqrt2 \\text{ or } x < -\\sqrt2")
        self.differ("x^2 > 2", "x > 1.414 \\text{ or } x < -1.414")
        self.same("x \\ne 2", "x < 2 \\text{ or } x > 2")
        self.same("x^2 - 3 \\ne 1", "x < -2 \\text{ or } (-2 < x \\text{ and } x < 2) \\text{ or } 2 < x", "x \\ne 2 \\text{ and } x \\ne -2")
        self.differ("x^2 - 3 \\ne 1", "x < -2 \\text{ or } (x < -2 \\text{ and } x < 2) \\text{ or } 2 < x")
        self.same("x \\ge 1 \\text{ and } x \\le 1", "x = 1")
        # "and" binds tighter than "or"; parentheses group
        self.same("(x < 0 \\text{ or } x \\ge 1) \\text{ and } x \\le 3", "x < 0 \\text{ or } (x \\ge 1 \\text{ and } x \\le 3)",
                  "x < 0 \\text{ or } x \\ge 1 \\text{ and } x \\le 3")
        self.differ("(x < 0 \\text{ or } x \\ge 1) \\text{ and } x \\le 3", "x < 0 \\text{ or } x \\ge 1")
        # where a side is undefined it does not hold
        self.same("\\frac{x-1}{x+2} \\ge 0", "x < -2 \\text{ or } x \\ge 1")
        self.differ("\\frac{x-1}{x+2} \\ge 0", "x \\le -2 \\text{ or } x \\ge 1")
        self.same("\\frac{1}{x} \\ge 0", "x > 0")
        self.differ("\\frac{1}{x} \\ge 0", "x \\ge 0")
        # absolute values split at the sign of their argument
        self.same("|x - 1| < 2", "-1 < x < 3", "(-1, 3)")
        self.differ("|x - 1| < 2", "-1 < x \\le 3")
        self.same("|x| = 3", "x = 3 \\text{ or } x = -3")
        self.differ("|x| = 3", "x = 3")
        self.differ("x^2 \\le 9", "|x| < 3")
        self.differ("x^2 > 4", "x > 2 \\text{ or } y < -2")
        self.differ("x > 2", "x > 2 \\text{ or } y > 2")  # relations of two variables are no interval
        self.same("x^2 > 4", "x \\in (-\\infty, -2) \\cup (2, \\infty)")

    def test_solving_is_bounded(self):
        roots = "(x-1)(x-2)(x-3)(x-4)(x-5)(x-6)(x-7)(x-8)(x-9)(x-10)(x-11)(x-12)"
        signs = "x < 1 \\text{ or } (2 < x < 3) \\text{ or } (4 < x < 5) \\text{ or } (6 < x < 7) \\text{ or } (8 < x < 9) \\text{ or } (10 < x < 11) \\text{ or } x > 12"
        self.assertTrue(is_equiv(roots + " > 0", signs))
        self.assertFalse(is_equiv(roots + "(x-13) > 0", signs + " \\text{ and } x < 13"))  # degree 13: not solved
        saved = math_grader.SOLVE_BUDGET_S
        math_grader.SOLVE_BUDGET_S = 0.0
        try:
            self.assertFalse(is_equiv(roots + " > 0", signs))  # out of time: not decided, so not equal
        finally:
            math_grader.SOLVE_BUDGET_S = saved
        self.assertTrue(is_equiv("x^2 > 4", "x > 2 \\text{ or } x < -2"))

    def test_square_roots_of_negative_numbers(self):
        self.same("\\sqrt{-1}", "i")
        self.same("\\sqrt{-4}", "2i")
        self.differ("\\sqrt{-4}", "2")
        self.differ("\\sqrt{-4}", "-2i")
        # the principal value only where the two sides are never real at the same points
        self.same("\\frac{i}{\\sqrt{x}}", "\\sqrt{-\\frac{1}{x}}")
        self.differ("-\\frac{i}{\\sqrt{x}}", "\\sqrt{-\\frac{1}{x}}")
        self.same("\\sqrt{a}\\sqrt{b}", "\\sqrt{ab}")

    def test_sign_function_and_roots_of_any_index(self):
        self.same("\\operatorname{sgn}(-3)", "-1", "\\operatorname{sgn}(-\\pi)")
        self.differ("\\operatorname{sgn}(-3)", "1")
        self.same("\\log_{10}(\\sqrt[n]{x})", "\\frac{\\log_{10} x}{n}")
        self.differ("\\ln(\\sqrt[n]{x})", "\\frac{\\log_{10} x}{n}")

    def test_large_factorials_exactly(self):
        self.same("\\frac{175! \\cdot 56!}{55! \\cdot 176!}", "\\frac{17556}{55176}", "\\frac{7}{22}")
        self.differ("\\frac{175! \\cdot 56!}{55! \\cdot 176!}", "\\frac{7}{23}")

    def test_huge_powers_by_prime_exponents(self):
        self.same("2^{2^{20}}", "4^{2^{19}}", "2^{2^{19}} \\cdot 2^{2^{19}}")
        self.differ("2^{2^{20}}", "4^{2^{19}+1}")
        self.same("6^{10^6}", "2^{10^6} \\cdot 3^{10^6}")
        self.differ("6^{10^6}", "2^{10^6} \\cdot 3^{10^6+1}")
        self.same("(-2)^{10^6+1}", "-2^{10^6+1}")
        self.differ("(-2)^{10^6}", "-2^{10^6}")
        self.differ("2^{100000}", "2^{100000}+1")  # a sum is not a product of powers: not decided, so not equal
        # a long plain number is read (up to MAX_NUMBER_CHARS), other long answers are not
        third = "1" + "0" * 1000
        self.assertTrue(is_equiv("\\frac{10^{1000}}{3}", third + "/3"))
        self.assertFalse(is_equiv("\\frac{10^{1000}}{3}", third + "/7"))
        self.assertFalse(is_equiv("x" + "+x" * 300, "301x"))

    def test_intersections_of_intervals(self):
        self.same("(-1, 1] \\cap [1, 2)", "\\{1\\}")
        self.differ("(-1, 1] \\cap [1, 2)", "\\{2\\}")
        self.same("(0, 3) \\cap (1, 5)", "(1, 3)")
        self.differ("(0, 3) \\cap (1, 5)", "(1, 3]")

    def test_matrices_and_vectors(self):
        self.same("\\begin{pmatrix} 1 & \\frac12 \\\\ 0 & 4 \\end{pmatrix}", "\\begin{bmatrix}1&0.5\\\\0&4\\end{bmatrix}")
        self.differ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}")
        self.same("\\begin{pmatrix} -6 \\\\ 9 \\end{pmatrix}", "(-6, 9)")
        self.differ("\\begin{pmatrix} -6 \\\\ 9 \\end{pmatrix}", "(9, -6)")

    def test_radicals_constants_and_trigonometry(self):
        self.same("\\sqrt{12}", "2\\sqrt3", "2\\sqrt{3}", "\\sqrt{3}\\cdot 2")
        self.same("\\sqrt[3]{8}", "2")
        self.same("\\frac{\\sqrt3}{2}", "0.8660254037844386")
        self.same("\\frac{3\\pi}{4}", "\\frac34\\pi", "0.75\\pi")
        self.same("\\sin^2 x + \\cos^2 x", "1")
        self.same("\\sin 30^\\circ", "\\frac12", "\\cos 60^{\\circ}")
        self.same("\\sin(90^{\\circ}-x)", "\\cos x")
        self.differ("\\sin 30", "\\frac12")
        self.differ("\\frac{\\sqrt3}{2}", "0.866")
        self.differ("\\sqrt{12}", "3\\sqrt2")

    def test_complex_numbers(self):
        self.same("1+2i", "i(2-i)", "2i+1")
        self.differ("1+2i", "1-2i")

    def test_scientific_notation_and_leading_zeros(self):
        self.same("3.54 \\times 10^{-7}", "3.54e-07", "0.000000354")
        self.same("033", "33", "+033")
        self.same("2^{100}", "1267650600228229401496703205376")
        self.differ("2^{100}", "1267650600228229401496703205377")
        self.same("0.30000000000000004", "0.3")
        self.differ("3.54 \\times 10^{-7}", "3.54e-06")

    def test_alternatives_joined_by_or(self):
        self.same("x < -1 \\text{ or } x > 3", "(-\\infty,-1)\\cup(3,\\infty)", "(3, \\infty) \\cup (-\\infty, -1)")
        self.same("x = 1 \\text{ or } x = 2", "2, 1")
        self.same("\\mathbb{R}", "(-\\infty, \\infty)")
        self.differ("x < -1 \\text{ or } x > 3", "(-\\infty,-1]\\cup(3,\\infty)")
        self.differ("x = 1 \\text{ or } x = 2", "1")

    def test_complex_values_take_the_principal_branch(self):
        self.same("e^{i\\pi}", "-1", "\\exp(i\\pi)")
        self.same("e^{i\\pi/2}", "i")
        self.same("(4\\sqrt{3}i+4)^{1/5}", "8^{1/5}(\\cos\\frac{\\pi}{15}+i\\sin\\frac{\\pi}{15})")
        self.differ("e^{i\\pi}", "1")
        self.differ("(4\\sqrt{3}i+4)^{1/5}", "6^{1/5}\\cos\\frac{\\pi}{15}-6^{1/5}i\\sin\\frac{\\pi}{15}")
        self.differ("\\sqrt[3]{x}", "x^{1/3} + i")

    def test_fast_growing_expressions_compare_at_small_points(self):
        self.same("6e^{6(x^2+y^2)} + 72x^2 e^{6(x^2+y^2)}", "(72x^2+6)e^{6(x^2+y^2)}")
        self.differ("6e^{6(x^2+y^2)} + 72x^2 e^{6(x^2+y^2)}", "(72x^2+7)e^{6(x^2+y^2)}")

    def test_factorials_and_binomials_with_variables(self):
        self.same("\\frac{n!}{k!(n-k)!}", "\\binom{n}{k}", "\\binom{n}{n-k}")
        self.same("\\frac{n}{n!}", "\\frac{1}{(n-1)!}")
        self.same("\\binom{n}{k} + \\binom{n}{k+1}", "\\binom{n+1}{k+1}")
        self.differ("\\frac{n}{n!}", "\\frac{1}{(n+1)!}")
        self.differ("\\binom{n}{k} + \\binom{n}{k+1}", "\\binom{n+1}{k}")

    def test_logarithms(self):
        self.same("\\log_2 8", "3", "\\log_{2}(8)", "\\frac{\\ln 8}{\\ln 2}")
        self.same("\\log_b b^2", "2")
        self.differ("\\log_2 8", "4")

    def test_cas_and_calculator_function_spellings(self):
        # reciprocal hyperbolic and inverse reciprocal trigonometric functions (arccot x = arctan(1/x))
        self.same("\\operatorname{sech} x", "sech(x)", "\\frac{1}{\\cosh x}")
        self.same("\\coth x", "1/tanh x", "\\frac{\\cosh x}{\\sinh x}")
        self.same("arccot(x)", "\\arctan\\frac1x")
        self.same("arcsec 2", "\\frac{\\pi}{3}")
        self.differ("\\coth x", "\\tanh x")
        self.differ("arcsec 2", "\\frac{\\pi}{6}")
        # rounding functions, in words and brackets
        self.same("\\lfloor \\frac72 \\rfloor", "floor(3.5)", "\\left\\lfloor 7/2 \\right\\rfloor", "⌊7/2⌋", "3")
        self.same("\\lceil \\frac72 \\rceil", "ceil(7/2)", "4")
        self.same("floor(-10.3)", "-11")
        self.same("round(-10.5)", "-11")  # half away from zero
        self.same("trunc(-9.99)", "-9")
        self.differ("\\lfloor \\frac72 \\rfloor", "4")
        self.differ("floor(-10.3)", "-10")
        self.differ("trunc(-9.99)", "-10")
        # real n-th roots
        self.same("cbrt(-8)", "nthroot(-8, 3)", "-2")
        self.same("cbrt(27x^3)", "3x")
        self.same("nthroot(81, 4)", "3")
        self.differ("cbrt(-8)", "2")
        self.differ("nthroot(81, 4)", "9")
        # the spelled-out factorial, and the factorial at a non-integer (Gamma(x + 1))
        self.same("factorial(5)", "5!", "120")
        self.same("factorial(n)/factorial(n-1)", "n")
        self.same("(1/2)!", "\\frac{\\sqrt{\\pi}}{2}")
        self.differ("(1/2)!", "\\sqrt{\\pi}")
        self.differ("factorial(5)", "24")
        # the factorial of a group with nested parentheses
        self.same("(2(n+1))!", "(2n+2)!", "factorial(2n+2)")
        self.same("\\frac{(2(n+1))!}{(2n+1)!}", "2n+2")
        self.differ("(2(n+1))!", "(2n+1)!")
        self.assertIsNone(math_grader.value_of("5!!"))  # a double factorial (15) is not read as (5!)!

    def test_odd_roots_of_negative_numbers_are_real(self):
        self.same("(-8)^{1/3}", "\\sqrt[3]{-8}", "-2")
        self.same("(-8)^{2/3}", "4")
        self.same("(-32)^{0.2}", "-2")
        self.same("(x^{1/3})^2", "x^{2/3}", "\\sqrt[3]{x^2}")
        self.differ("(-8)^{1/3}", "2")
        self.differ("(x^2)^{1/6}", "x^{1/3}")  # |x|^{1/3} is not x^{1/3} where x < 0
        self.assertIsNone(math_grader.value_of("(-8)^{1/4}"))  # an even root of a negative number has no real value

    def test_a_function_call_as_the_argument_of_a_bare_function(self):
        self.same("\\ln|x^2|", "2\\ln|x|", "\\ln(x^2)")
        self.same("\\sin\\sqrt{x}", "\\sin(x^{1/2})")
        self.same("f(x) = \\ln|x| + C", "f(x) - \\ln|x| - C = 0")
        self.differ("\\ln|x+1|", "\\ln|x-1|")
        self.differ("\\sin\\sqrt{x}", "\\sqrt{\\sin x}")

    def test_words_and_products_of_letters(self):
        self.same("White", "white", "\\text{white}")
        self.same("xy", "yx", "x \\cdot y")
        self.differ("Devon", "Devin")
        self.differ("E", "e")

    def test_multiple_choice_letters(self):
        self.same("C", "(C)", "C. x = 42")
        self.differ("C", "D")

    def test_expressions(self):
        self.same("(2x+3)(2x -1)(2x+1)", "(2x - 1)(2x + 1)(2x + 3)")
        self.same("\\frac{8-7x}{6}", "4/3-7x/6")
        self.same("2^6 \\cdot 3^5", "2^6 3^5")
        self.differ("x^2+2x+1", "x^3+2x+1")
        self.differ("\\frac{1}{2}x", "\\frac12")


class VerifierTest(unittest.TestCase):
    def test_the_components_name_the_checker(self):
        expected = "sympy"
        try:
            import sympy  # noqa: F401
        except ImportError:
            expected = "stdlib"
        self.assertEqual(compute_score("math", "\\boxed{1}", "1")["verifier"], expected)

    def test_math_verify_decides_when_importable(self):
        calls = []
        fake = types.ModuleType("math_verify")
        fake.parse = lambda text: [text]
        fake.verify = lambda gold, answer: calls.append((gold, answer)) or answer == ["\\boxed{forty-two}"]
        saved = sys.modules.get("math_verify")
        sys.modules["math_verify"] = fake
        try:
            r = compute_score("math", "so \\boxed{forty-two}", "42")
            self.assertEqual((r["acc"], r["verifier"]), (1.0, "math_verify"))
            self.assertEqual(calls[-1], (["\\boxed{42}"], ["\\boxed{forty-two}"]))
            # where it says no, the template's own checks still decide
            self.assertEqual(compute_score("math", "\\boxed{\\frac{84}{2}}", "42")["acc"], 1.0)
            self.assertEqual(compute_score("math", "\\boxed{41}", "42")["acc"], 0.0)
        finally:
            if saved is None:
                del sys.modules["math_verify"]
            else:
                sys.modules["math_verify"] = saved
        self.assertNotEqual(math_grader.verifier(), "math_verify")

    def test_a_broken_math_verify_does_not_break_the_reward(self):
        fake = types.ModuleType("math_verify")

        def boom(*args, **kwargs):
            raise RuntimeError("parser crashed")

        fake.parse = fake.verify = boom
        sys.modules["math_verify"] = fake
        try:
            self.assertEqual(compute_score("math", "\\boxed{0.5}", "\\frac12")["acc"], 1.0)
        finally:
            del sys.modules["math_verify"]

    def test_sympy_runs_under_a_timeout(self):
        start = time.monotonic()
        with self.assertRaises(math_grader._Timeout):
            math_grader._with_timeout(lambda: time.sleep(5), 0.2)
        self.assertLess(time.monotonic() - start, 2.0)
        self.assertEqual(math_grader._with_timeout(lambda: 7, 0.2), 7)

    def test_the_callers_own_timer_survives(self):
        import signal

        fired = []
        old = signal.signal(signal.SIGALRM, lambda *args: fired.append(True))
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.4)
            with self.assertRaises(math_grader._Timeout):
                math_grader._with_timeout(lambda: time.sleep(2), 0.1)
            time.sleep(0.6)
            self.assertEqual(fired, [True])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


class CompatibilityTest(unittest.TestCase):
    def test_python_files_parse_as_python_3_9(self):
        for folder in ("reward", "filters", "train", "tests", "tools"):
            for name in sorted(os.listdir(os.path.join(ROOT, folder))):
                if name.endswith(".py"):
                    path = os.path.join(ROOT, folder, name)
                    with open(path, encoding="utf-8") as f:
                        ast.parse(f.read(), path, feature_version=(3, 9))


if __name__ == "__main__":
    unittest.main()

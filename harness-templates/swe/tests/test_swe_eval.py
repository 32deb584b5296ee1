"""The SWE judge against a small Python repository built here with real git (no network).

Run from the harness root: python3 -m unittest
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "reward"))
sys.path.insert(0, os.path.join(ROOT, "env"))

from compute_score import compute_score  # noqa: E402
from swe_eval import evaluate, extract_patch, framework_tampering, parse_unittest, patch_files  # noqa: E402
from workspace import prepare_workspace  # noqa: E402

ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1")

CALC_BUGGY = '''def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def divide(a, b):
    return a / b if b else 0
'''
CALC_FIXED = CALC_BUGGY.replace("    return a / b if b else 0\n", "    if b == 0:\n        raise ZeroDivisionError(\"divide by zero\")\n    return a / b\n")
TESTS_BASE = '''import unittest

from calc import add, divide, sub


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(2, 3), -1)

    def test_divide(self):
        self.assertEqual(divide(6, 3), 2)
'''
TESTS_GOLD = TESTS_BASE + '''
    def test_divide_by_zero_raises(self):
        with self.assertRaises(ZeroDivisionError):
            divide(1, 0)
'''

F2P = ["tests.test_calc.CalcTest.test_divide_by_zero_raises"]
P2P = ["tests.test_calc.CalcTest.test_add", "tests.test_calc.CalcTest.test_sub", "tests.test_calc.CalcTest.test_divide"]


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout


def write(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def diff_of(repo, base, edit):
    """A real `git diff` of an edit made on a throwaway checkout of base."""
    work = tempfile.mkdtemp()
    try:
        git(work, "clone", "-q", repo, "w")
        w = os.path.join(work, "w")
        git(w, "checkout", "-q", base)
        edit(w)
        git(w, "add", "-A")
        return git(w, "diff", "--cached")
    finally:
        shutil.rmtree(work, ignore_errors=True)


class RepoCase(unittest.TestCase):
    """A task repository: a base commit with a bug, then the upstream fix committed after it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="swe-test-")
        cls.repo = os.path.join(cls.tmp, "calc-repo")
        os.makedirs(cls.repo)
        git(cls.repo, "init", "-q", "-b", "main")
        write(cls.repo, "calc.py", CALC_BUGGY)
        write(cls.repo, "tests/__init__.py", "")
        write(cls.repo, "tests/test_calc.py", TESTS_BASE)
        git(cls.repo, "add", "-A")
        git(cls.repo, "commit", "-q", "-m", "calc with a silent divide-by-zero")
        cls.base = git(cls.repo, "rev-parse", "HEAD").strip()
        # the upstream fix, committed later: the history an agent must not be able to read
        write(cls.repo, "calc.py", CALC_FIXED)
        write(cls.repo, "tests/test_calc.py", TESTS_GOLD)
        git(cls.repo, "commit", "-q", "-am", "UPSTREAM-FIX: raise ZeroDivisionError on divide by zero")
        cls.fix_commit = git(cls.repo, "rev-parse", "HEAD").strip()
        cls.test_patch = git(cls.repo, "diff", cls.base, cls.fix_commit, "--", "tests/")
        cls.task = {"instance_id": "calc__calc-1", "repo": cls.repo, "base_commit": cls.base,
                    "FAIL_TO_PASS": json.dumps(F2P), "PASS_TO_PASS": json.dumps(P2P), "test_patch": cls.test_patch}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def judge(self, patch):
        report = evaluate(self.task, patch)
        self.assertEqual(set(report) - {"evotrainer"}, {"calc__calc-1"})
        r = report["calc__calc-1"]
        self.assertEqual(set(r), {"patch_is_None", "patch_exists", "patch_successfully_applied", "resolved", "tests_status"})
        self.assertEqual(set(r["tests_status"]["FAIL_TO_PASS"]), {"success", "failure"})
        return r, report["evotrainer"]


class SweJudgeTest(RepoCase):
    def test_correct_fix_resolves(self):
        patch = diff_of(self.repo, self.base, lambda w: write(w, "calc.py", CALC_FIXED))
        r, _ = self.judge(patch)
        self.assertEqual((r["patch_exists"], r["patch_successfully_applied"], r["resolved"]), (True, True, True))
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"], {"success": F2P, "failure": []})
        self.assertEqual(r["tests_status"]["PASS_TO_PASS"], {"success": P2P, "failure": []})

    def test_wrong_fix_does_not(self):
        wrong = CALC_BUGGY.replace("return a / b if b else 0", "return a / b if b else float('inf')")
        r, _ = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", wrong)))
        self.assertEqual((r["patch_successfully_applied"], r["resolved"]), (True, False))
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"], {"success": [], "failure": F2P})
        self.assertEqual(r["tests_status"]["PASS_TO_PASS"]["failure"], [])

    def test_fix_that_breaks_other_tests_does_not(self):
        broken = CALC_FIXED.replace("return a - b", "return b - a")
        r, _ = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", broken)))
        self.assertFalse(r["resolved"])
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["success"], F2P)
        self.assertEqual(r["tests_status"]["PASS_TO_PASS"]["failure"], ["tests.test_calc.CalcTest.test_sub"])

    def test_patch_that_does_not_apply(self):
        patch = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -9,2 +9,4 @@\n"
                 " def divide(x, y):\n-    return x // y\n+    if y == 0:\n+        raise ZeroDivisionError\n+    return x / y\n")
        r, details = self.judge(patch)
        self.assertEqual((r["patch_exists"], r["patch_successfully_applied"], r["resolved"]), (True, False, False))
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["failure"], F2P)
        self.assertTrue(details["apply"])

    def test_no_patch(self):
        r, _ = self.judge(None)
        self.assertEqual((r["patch_is_None"], r["patch_exists"], r["resolved"]), (True, False, False))
        r, _ = self.judge("   \n")
        self.assertEqual((r["patch_is_None"], r["patch_exists"], r["resolved"]), (False, False, False))

    def test_patch_deleting_the_failing_test_earns_nothing(self):
        def edit(w):
            os.unlink(os.path.join(w, "tests", "test_calc.py"))
        r, details = self.judge(diff_of(self.repo, self.base, edit))
        self.assertFalse(r["resolved"])
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["failure"], F2P)
        self.assertEqual(details["touched_tests"], ["tests/test_calc.py"])

    def test_patch_skipping_the_failing_test_earns_nothing(self):
        # the candidate adds the benchmark's test itself, marked skipped, and "fixes" nothing
        skipped = TESTS_GOLD.replace("    def test_divide_by_zero_raises", "    @unittest.skip('flaky')\n    def test_divide_by_zero_raises")
        r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "tests/test_calc.py", skipped)))
        self.assertFalse(r["resolved"])
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["failure"], F2P)

    def test_correct_fix_plus_test_edits_earns_nothing(self):
        def edit(w):
            write(w, "calc.py", CALC_FIXED)
            write(w, "tests/test_calc.py", TESTS_BASE.replace("assertEqual(add(2, 3), 5)", "assertTrue(True)"))
        r, details = self.judge(diff_of(self.repo, self.base, edit))
        self.assertFalse(r["resolved"])  # the tests themselves pass (they were restored), the edit is refused
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["success"], F2P)

    def test_patching_the_test_framework_earns_nothing(self):
        cheat = CALC_BUGGY + "\nimport unittest\nunittest.TestCase.assertRaises = lambda self, *a, **k: __import__('contextlib').nullcontext()\n"
        r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", cheat)))
        self.assertFalse(r["resolved"])
        self.assertTrue(details["framework_tampering"])

    def test_fix_that_hangs_times_out_unresolved(self):
        hang = CALC_FIXED.replace("def divide(a, b):\n", "def divide(a, b):\n    while b == 0:\n        pass\n")
        patch = diff_of(self.repo, self.base, lambda w: write(w, "calc.py", hang))
        import time

        start = time.monotonic()
        report = evaluate(dict(self.task, test_timeout_s=3), patch)
        self.assertLess(time.monotonic() - start, 30)
        r = report["calc__calc-1"]
        self.assertEqual((r["patch_successfully_applied"], r["resolved"]), (True, False))
        self.assertEqual(r["tests_status"]["FAIL_TO_PASS"]["failure"], F2P)

    def test_compute_score_and_report_file(self):
        patch = diff_of(self.repo, self.base, lambda w: write(w, "calc.py", CALC_FIXED))
        out = tempfile.mkdtemp(dir=self.tmp)
        s = compute_score("swe", "I fixed it.\n```diff\n" + patch + "```\n", json.dumps(self.task), {"report_dir": out})
        self.assertEqual((s["score"], s["acc"], s["patch_applied"], s["f2p_pass_rate"], s["p2p_pass_rate"]), (1.0, 1.0, 1.0, 1.0, 1.0))
        with open(os.path.join(out, "calc__calc-1", "report.json")) as f:
            rep = json.load(f)
        self.assertTrue(rep["calc__calc-1"]["resolved"])
        self.assertNotIn("evotrainer", rep)
        s = compute_score("swe", "no diff here", self.task)
        self.assertEqual((s["score"], s["patch_applied"]), (0.0, 0.0))

    def test_repo_is_left_clean(self):
        self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", CALC_FIXED)))
        self.assertEqual(git(self.repo, "worktree", "list").count("\n"), 1)
        self.assertEqual(git(self.repo, "status", "--porcelain"), "")
        self.assertEqual(git(self.repo, "rev-parse", "HEAD").strip(), self.fix_commit)

    def test_bad_task_says_what_to_do(self):
        with self.assertRaisesRegex(ValueError, "not a git repository"):
            evaluate(dict(self.task, repo=self.tmp), "diff --git a/x b/x\n")
        with self.assertRaisesRegex(ValueError, "base_commit"):
            compute_score("swe", "x", {"instance_id": "i", "repo": self.repo})


class ScrubTest(RepoCase):
    """The environment switch scrub_git_history (on by default) leaves no reachable history."""

    def test_scrubbed_workspace_has_no_history(self):
        dest = os.path.join(self.tmp, "agent-ws")
        info = prepare_workspace(self.repo, self.base, dest)  # default: env/config.json
        self.assertTrue(info["scrubbed"])
        with open(os.path.join(dest, "calc.py")) as f:
            self.assertEqual(f.read(), CALC_BUGGY)
        self.assertEqual(git(dest, "rev-list", "--all", "--count").strip(), "1")
        log = git(dest, "log", "--all", "--format=%H %s")
        self.assertNotIn("UPSTREAM-FIX", log)
        self.assertNotIn(self.fix_commit, log)
        self.assertEqual(git(dest, "remote").strip(), "")
        self.assertEqual(subprocess.run(["git", "cat-file", "-e", self.fix_commit], cwd=dest, env=ENV).returncode != 0, True)
        self.assertEqual(git(dest, "fsck", "--unreachable", "--no-reflogs").strip(), "")
        # nothing of the fix anywhere in the object store, reachable or not
        objects = git(dest, "cat-file", "--batch-all-objects", "--batch-check")
        for line in objects.splitlines():
            sha = line.split()[0]
            self.assertNotIn("raise ZeroDivisionError", git(dest, "cat-file", "-p", sha))
        self.assertEqual(git(dest, "status", "--porcelain"), "")
        # the agent's own edits still show in git diff
        write(dest, "calc.py", CALC_FIXED)
        self.assertIn("raise ZeroDivisionError", git(dest, "diff"))

    def test_unscrubbed_workspace_leaks_the_fix(self):
        dest = os.path.join(self.tmp, "agent-ws-leaky")
        prepare_workspace(self.repo, self.base, dest, scrub=False)
        self.assertIn("UPSTREAM-FIX", git(dest, "log", "--all", "--format=%s"))


class ParsingTest(unittest.TestCase):
    def test_unittest_output_of_old_and_new_pythons(self):
        log = ("test_a (tests.t.C) ... ok\ntest_b (tests.t.C.test_b) ... FAIL\n"
               "test_c (tests.t.C.test_c)\nDoc line ... skipped 'x'\ntest_d (tests.t.C) ... ERROR\n")
        self.assertEqual(parse_unittest(log), {"tests.t.C.test_a": "PASSED", "tests.t.C.test_b": "FAILED",
                                               "tests.t.C.test_c": "SKIPPED", "tests.t.C.test_d": "FAILED"})

    def test_patch_helpers(self):
        p = "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+import pytest\n"
        self.assertEqual(patch_files(p), ["src/x.py"])
        self.assertTrue(framework_tampering(p))
        self.assertFalse(framework_tampering(p.replace("src/x.py", "tests/test_x.py")))
        self.assertEqual(extract_patch("text\n```diff\n" + p + "```"), p)
        self.assertIsNone(extract_patch(None))


if __name__ == "__main__":
    unittest.main()

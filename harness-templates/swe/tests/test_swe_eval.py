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
from swe_eval import evaluate, extract_patch, framework_tampering, is_test_config, is_test_path, patch_files  # noqa: E402
from workspace import prepare_workspace  # noqa: E402

try:
    import pytest  # noqa: F401

    HAS_PYTEST = True
except ImportError:
    HAS_PYTEST = False
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
# the same tests as pytest node ids
PY_F2P = ["tests/test_calc.py::CalcTest::test_divide_by_zero_raises"]
PY_P2P = ["tests/test_calc.py::CalcTest::test_add", "tests/test_calc.py::CalcTest::test_sub", "tests/test_calc.py::CalcTest::test_divide"]
SETUP_CFG = "[metadata]\nname = calc\n\n[tool:pytest]\ntestpaths = tests\n"


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
        write(cls.repo, "setup.cfg", SETUP_CFG)
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

    def judge(self, patch, runner="unittest"):
        if runner == "pytest" and not HAS_PYTEST:
            self.skipTest("pytest is not installed for %s: the pytest runner cannot be judged here" % sys.executable)
        task = self.task if runner == "unittest" else dict(self.task, test_runner=runner, FAIL_TO_PASS=PY_F2P, PASS_TO_PASS=PY_P2P)
        report = evaluate(task, patch)
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

    def test_correct_fix_resolves_under_pytest(self):
        r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", CALC_FIXED)), "pytest")
        self.assertEqual(details["framework_tampering"], [])
        self.assertEqual((r["resolved"], r["tests_status"]["FAIL_TO_PASS"]), (True, {"success": PY_F2P, "failure": []}))
        self.assertEqual(r["tests_status"]["PASS_TO_PASS"], {"success": PY_P2P, "failure": []})
        # (with the installed pytest plugins loaded: one that patches the framework at import is not the patch's doing)

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


# Passing lines as unittest and pytest print them, for the tests the task needs.
FAKE_PASS = ("import sys\n"
             "for t in %r:\n"
             "    c, m = t.rsplit('.', 1)\n"
             "    sys.stderr.write('%%s (%%s) ... ok\\n' %% (m, t))\n"
             "for t in %r:\n"
             "    print('PASSED ' + t)\n"
             "sys.stderr.write('\\nRan 4 tests in 0.001s\\n\\nOK\\n')\n"
             "print('4 passed')\n" % (F2P + P2P, PY_F2P + PY_P2P))


# a pytest plugin that reports every test as passed
PASS_EVERYTHING = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                   "    outcome = yield\n    rep = outcome.get_result()\n    rep.outcome = 'passed'\n    rep.longrepr = None\n")


class JudgeExploitTest(RepoCase):
    """Patches that fix nothing but make the judge report success, each run for real (installed
    pytest plugins not auto-loaded here, for speed: the attacks need none)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"

    @classmethod
    def tearDownClass(cls):
        os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        super().tearDownClass()

    def assertNotResolved(self, r, details, why, tests_fail=True):
        self.assertTrue(r["patch_successfully_applied"], why)
        self.assertFalse(r["resolved"], "%s was credited: %s" % (why, details))
        if tests_fail:  # the failing test still fails: nothing the patch printed or planted counted
            f2p = r["tests_status"]["FAIL_TO_PASS"]
            self.assertEqual((f2p["success"], len(f2p["failure"])), ([], 1), why)

    def test_a_module_shadowing_the_test_runner_earns_nothing(self):
        # a module, or a package with its __main__ (what `python -m` runs)
        for runner, paths in (("unittest", ["unittest.py"]), ("unittest", ["unittest/__init__.py", "unittest/__main__.py"]),
                              ("pytest", ["pytest.py"]), ("pytest", ["pytest/__init__.py", "pytest/__main__.py"])):
            with self.subTest(runner=runner, paths=paths):
                patch = diff_of(self.repo, self.base, lambda w: [write(w, p, FAKE_PASS) for p in paths])
                r, details = self.judge(patch, runner)
                self.assertNotResolved(r, details, paths[-1])

    def test_printing_passing_lines_earns_nothing(self):
        # from the code under test, after the tests ran (an exit handler under another name)
        cheat = CALC_BUGGY + "\nimport atexit as _later\n_later.register(lambda: exec(%r))\n" % FAKE_PASS
        for runner in ("unittest", "pytest"):
            with self.subTest(runner=runner):
                r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, "calc.py", cheat)), runner)
                self.assertNotResolved(r, details, "printed lines")

    def test_patching_the_framework_out_of_sight_earns_nothing(self):
        # no `unittest.` or `pytest` in the diff for a pattern to see
        cheats = {
            "setattr": "import importlib\n_u = importlib.import_module('unit' + 'test')\n"
                       "setattr(getattr(_u, 'Test' + 'Case'), 'assert' + 'Raises', lambda self, *a, **k: __import__('contextlib').nullcontext())\n",
            "result": "import importlib\n_r = importlib.import_module('unit' + 'test.result')\n"
                      "setattr(_r.TestResult, 'add' + 'Error', lambda self, test, err: self.addSuccess(test))\n"
                      "setattr(_r.TestResult, 'add' + 'Failure', lambda self, test, err: self.addSuccess(test))\n",
        }
        for name, code in cheats.items():
            for runner in ("unittest", "pytest"):
                with self.subTest(cheat=name, runner=runner):
                    patch = diff_of(self.repo, self.base, lambda w: write(w, "calc.py", CALC_BUGGY + "\n" + code))
                    self.assertEqual(framework_tampering(patch), [], "the pattern check was meant not to see this one")
                    r, details = self.judge(patch, runner)
                    self.assertNotResolved(r, details, name, tests_fail=False)
                    self.assertTrue(details["framework_tampering"], name)

    def test_the_patched_code_sees_none_of_the_trainers_secrets(self):
        leak = CALC_FIXED + "\nimport os, sys\nsys.stderr.write('LEAKED=%s\\n' % os.environ.get('OPENAI_API_KEY', 'none'))\n"
        os.environ["OPENAI_API_KEY"] = "sk-test-trainer-secret"
        try:
            report = evaluate(self.task, diff_of(self.repo, self.base, lambda w: write(w, "calc.py", leak)), keep_log=True)
        finally:
            del os.environ["OPENAI_API_KEY"]
        log = report["evotrainer"]["log"]
        self.assertIn("LEAKED=none", log)
        self.assertNotIn("sk-test-trainer-secret", log)
        self.assertTrue(report["calc__calc-1"]["resolved"])  # a correct fix still resolves

    def test_a_plugin_added_to_the_test_configuration_earns_nothing(self):
        # (pythonpath puts the repository on the path before the plugin is imported)
        ini = "pythonpath = .\naddopts = -p calc_plugin\n"
        toml = 'pythonpath = ["."]\naddopts = ["-p", "calc_plugin"]\n'
        for config, text in (("setup.cfg", SETUP_CFG + ini), ("pytest.ini", "[pytest]\n" + ini), ("tox.ini", "[pytest]\n" + ini),
                             (".pytest.ini", "[pytest]\n" + ini), ("pyproject.toml", "[tool.pytest.ini_options]\n" + toml),
                             ("pytest.toml", "[pytest]\n" + toml), (".pytest.toml", "[pytest]\n" + toml)):
            def edit(w):
                write(w, "calc_plugin.py", PASS_EVERYTHING)
                write(w, config, text)
            with self.subTest(config):
                r, details = self.judge(diff_of(self.repo, self.base, edit), "pytest")
                self.assertNotResolved(r, details, config)
                self.assertIn(config, details["touched_test_config"])

    def test_a_conftest_passing_every_test_earns_nothing(self):
        # at the root, beside the tests, or in a package of the code: pytest loads each
        for path in ("conftest.py", "tests/conftest.py"):
            with self.subTest(path):
                r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, path, PASS_EVERYTHING)), "pytest")
                self.assertNotResolved(r, details, path)
                self.assertEqual(details["touched_tests"], [path])
        # pytest_plugins in a conftest naming a plugin module the patch adds elsewhere
        def edit(w):
            write(w, "calc_helpers.py", PASS_EVERYTHING)
            write(w, "conftest.py", "pytest_plugins = ['calc_helpers']\n")
        r, details = self.judge(diff_of(self.repo, self.base, edit), "pytest")
        self.assertNotResolved(r, details, "pytest_plugins")

    def test_interpreter_startup_files_earn_nothing(self):
        # sitecustomize / usercustomize / a .pth line that swallows every test's exception, written
        # out of sight of the pattern check. Run at startup, it would patch the framework before
        # the judge's snapshot of it; the trainer's PYTHONPATH would put the repository on the
        # path at startup if it reached the tests.
        cheat = ("import importlib\n_c = importlib.import_module('unit' + 'test.case')\n"
                 "_m = getattr(_c.TestCase, '_call' + 'TestMethod')\n"
                 "def _quiet(self, method, _m=_m):\n"
                 "    try:\n        _m(self, method)\n    except BaseException:\n        pass\n"
                 "setattr(_c.TestCase, '_call' + 'TestMethod', _quiet)\n")
        files = {"sitecustomize.py": cheat, "usercustomize.py": cheat,
                 "calc.pth": "import importlib; exec(%r)\n" % cheat.replace("import importlib\n", ""),
                 "src/sitecustomize.py": cheat}
        saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE")}
        os.environ.update(PYTHONPATH=".:src", PYTHONSTARTUP="sitecustomize.py", PYTHONUSERBASE=".")
        try:
            for name, text in files.items():
                for runner in ("unittest", "pytest"):
                    with self.subTest(name, runner=runner):
                        r, details = self.judge(diff_of(self.repo, self.base, lambda w: write(w, name, text)), runner)
                        self.assertNotResolved(r, details, name)
                        self.assertIn("interpreter startup file: " + name, details["framework_tampering"])
            # with a correct fix beside it, still nothing: the file has no place in a fix
            def edit(w):
                write(w, "calc.py", CALC_FIXED)
                write(w, "calc.pth", "import os\n")
            r, details = self.judge(diff_of(self.repo, self.base, edit))
            self.assertFalse(r["resolved"])
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_a_module_shadowing_the_standard_library_earns_nothing(self):
        # a task whose test compares through the standard library's decimal module: the
        # repository's root is ahead of the standard library on the tests' path, so a decimal.py
        # there is what the test imports (here one whose values are all equal), fixing nothing
        repo = os.path.join(self.tmp, "money-repo")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        write(repo, "money.py", "def total(a, b):\n    return a - b\n")
        write(repo, "tests/__init__.py", "")
        write(repo, "tests/test_money.py", "import unittest\nfrom decimal import Decimal\n\nfrom money import total\n\n\n"
                                           "class MoneyTest(unittest.TestCase):\n    def test_total(self):\n"
                                           "        self.assertEqual(Decimal(str(total(0.1, 0.2))).quantize(Decimal('0.01')), Decimal('0.30'))\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "money")
        base = git(repo, "rev-parse", "HEAD").strip()
        shadow = ("class Decimal(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n"
                  "    def quantize(self, *a):\n        return self\n")
        for runner, test_id in (("unittest", "tests.test_money.MoneyTest.test_total"), ("pytest", "tests/test_money.py::MoneyTest::test_total")):
            for path in ("decimal.py", "decimal/__init__.py"):
                with self.subTest(path, runner=runner):
                    if runner == "pytest" and not HAS_PYTEST:
                        self.skipTest("pytest is not installed for %s" % sys.executable)
                    task = {"instance_id": "money-1", "repo": repo, "base_commit": base, "FAIL_TO_PASS": [test_id], "PASS_TO_PASS": [],
                            "test_runner": runner}
                    report = evaluate(task, diff_of(repo, base, lambda w: write(w, path, shadow)))
                    self.assertFalse(report["money-1"]["resolved"], report["evotrainer"])
                    self.assertIn("shadows the standard library's decimal: " + path, report["evotrainer"]["framework_tampering"])
        # the same names below the root, or as tests, are ordinary files
        for path in ("src/decimal.py", "calc_pkg/json.py", "tests/json.py"):
            patch = diff_of(self.repo, self.base, lambda w: write(w, path, shadow))
            self.assertEqual(framework_tampering(patch), [], path)

    def test_deleting_or_renaming_the_failing_tests_earns_nothing(self):
        def delete_folder(w):
            shutil.rmtree(os.path.join(w, "tests"))

        def rename_file(w):
            os.rename(os.path.join(w, "tests", "test_calc.py"), os.path.join(w, "tests", "test_calc_old.py"))

        def rename_out_of_the_tests(w):
            os.rename(os.path.join(w, "tests", "test_calc.py"), os.path.join(w, "calc_checks.txt"))

        def rename_folder(w):
            os.rename(os.path.join(w, "tests"), os.path.join(w, "old_tests"))

        for edit in (delete_folder, rename_file, rename_out_of_the_tests, rename_folder):
            for runner in ("unittest", "pytest"):
                with self.subTest(edit.__name__, runner=runner):
                    patch = diff_of(self.repo, self.base, edit)
                    r, details = self.judge(patch, runner)
                    self.assertNotResolved(r, details, edit.__name__)
                    self.assertIn("tests/test_calc.py", details["touched_tests"])


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
    def test_test_paths_and_test_configuration(self):
        for p in ("tests/test_x.py", "test/x.py", "testing/x.py", "tests.py", "app/tests.py", "test.py", "x_test.py",
                  "x_tests.py", "spec/models_spec.py", "specs/x.py", "lib/models_spec.py", "conftest.py", "a/conftest.py"):
            self.assertTrue(is_test_path(p), p)
        for p in ("calc.py", "app/contest.py", "latest.py", "src/attestation.py", "inspector.py"):
            self.assertFalse(is_test_path(p), p)
        for p in ("setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "sub/pyproject.toml"):
            self.assertTrue(is_test_config(p), p)
        self.assertFalse(is_test_config("setup.py"))

    def test_patch_helpers(self):
        p = "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+import pytest\n"
        self.assertEqual(patch_files(p), ["src/x.py"])
        self.assertTrue(framework_tampering(p))
        self.assertFalse(framework_tampering(p.replace("src/x.py", "tests/test_x.py")))
        self.assertEqual(extract_patch("text\n```diff\n" + p + "```"), p)
        self.assertIsNone(extract_patch(None))


if __name__ == "__main__":
    unittest.main()

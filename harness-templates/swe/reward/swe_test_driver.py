"""Runs a task's tests in the patched repository and writes a machine-readable verdict per test
(started by swe_eval.py; never imported).

    python3 -I -B swe_test_driver.py RUNNER REPORT_FILE TEST_ID...      (a nonce line on stdin)

RUNNER is "unittest" or "pytest". The interpreter runs in isolated mode (no working folder,
script folder, PYTHON* variables or user site on sys.path), and the test framework is
imported here *before* the repository is reachable: a module the patch adds at the
repository's root (``unittest.py``, ``pytest.py``, ``pytest/__main__.py``, ...) is never the
runner. The verdicts come from the framework's own result objects, not from printed lines,
and are written to REPORT_FILE with the nonce read from stdin before any repository code
runs; a run that ends early (os._exit, a crash, a time-out) writes no report and every test
fails. Afterwards the framework's functions are compared with those it had before the
repository's code ran: a patch that replaces one (however it reached the module) is named in
the report's ``framework_changed``.
"""
import json
import os
import sys
import types

RUNNER, REPORT, TEST_IDS = sys.argv[1], sys.argv[2], sys.argv[3:]
NONCE = sys.stdin.readline().strip()
REPO = os.getcwd()

import unittest  # noqa: E402  (before the repository is on the path)
import unittest.mock  # noqa: E402,F401

if RUNNER == "pytest":
    import pytest  # noqa: F401

FRAMEWORK_PREFIXES = ("unittest", "pytest", "_pytest", "pluggy")


def framework_functions():
    """Every function and method of the test framework's modules and their classes, by name."""
    out = {}
    for name, mod in list(sys.modules.items()):
        if not isinstance(mod, types.ModuleType) or not name.split(".")[0] in FRAMEWORK_PREFIXES:
            continue
        for attr, value in list(vars(mod).items()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for k, v in list(vars(value).items()):
                    if callable(v) or isinstance(v, (staticmethod, classmethod, property)):
                        out["%s.%s.%s" % (name, attr, k)] = v
            elif callable(value):
                out["%s.%s" % (name, attr)] = value
    out["sys.exit"], out["os._exit"] = sys.exit, os._exit
    return out


def changed_functions(before):
    after = framework_functions()
    return sorted(k for k, v in before.items() if after.get(k) is not v)


class UnittestCollector(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.status = {}

    def addSuccess(self, test):
        self.status[test.id()] = "PASSED"

    def addFailure(self, test, err):
        self.status[test.id()] = "FAILED"

    def addError(self, test, err):
        self.status[test.id()] = "FAILED"

    def addSkip(self, test, reason):
        self.status[test.id()] = "SKIPPED"

    def addExpectedFailure(self, test, err):
        self.status[test.id()] = "PASSED"

    def addUnexpectedSuccess(self, test):
        self.status[test.id()] = "FAILED"

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.status[test.id()] = "FAILED"


def run_unittest(before):
    sys.path.insert(0, REPO)  # as `python -m unittest` has it, but only now
    modules = sorted({t.rsplit(".", 2)[0] if t.count(".") >= 2 else t for t in TEST_IDS})
    result = UnittestCollector()
    suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    suite.run(result)
    status = dict(result.status)
    # a test that failed in one subtest stays failed even if the method "succeeded" afterwards
    for test, _ in result.failures + result.errors:
        status[test.id()] = "FAILED"
    return status, changed_functions(before)


def run_pytest(_before):
    import pytest as framework

    class PytestCollector:
        def __init__(self):
            self.status = {}
            self.before = None

        @framework.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self):
            # installed plugins are loaded (some patch the framework); the repository's code is not
            self.before = framework_functions()

        def pytest_runtest_logreport(self, report):
            prev = self.status.get(report.nodeid)
            if getattr(report, "wasxfail", None) is not None and (report.skipped or report.when == "call"):
                self.status[report.nodeid] = "PASSED" if report.skipped else "FAILED"  # XFAIL passes, strict XPASS fails
            elif report.failed:
                self.status[report.nodeid] = "FAILED"
            elif report.skipped:
                if prev != "FAILED":
                    self.status[report.nodeid] = "SKIPPED"
            elif report.when == "call" and prev is None:
                self.status[report.nodeid] = "PASSED"

    collector = PytestCollector()
    framework.main(["-p", "no:cacheprovider", "-q", "--no-header", "-o", "addopts=", *TEST_IDS], plugins=[collector])
    return dict(collector.status), changed_functions(collector.before or {})


def main():
    before = framework_functions()
    mine = {k: v for k, v in vars(UnittestCollector).items() if callable(v)}
    status, changed = (run_pytest if RUNNER == "pytest" else run_unittest)(before)
    changed += sorted("UnittestCollector." + k for k, v in mine.items() if vars(UnittestCollector).get(k) is not v)
    with open(REPORT, "w", encoding="utf-8") as f:
        f.write(json.dumps({"nonce": NONCE, "status": status, "framework_changed": changed}))
    sys.stdout.flush()
    os._exit(0)


main()

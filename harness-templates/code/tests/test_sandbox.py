"""Verdict and tampering tests of the code reward. Run from the harness root: python3 -m unittest

Every program here is a real Python program run in the real sandbox.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REWARD = os.path.join(ROOT, "reward")
sys.path.insert(0, REWARD)

from compute_score import compute_score, extract_code, parse_tests, reward_func  # noqa: E402
from sandbox import isolation, outputs_match  # noqa: E402

TESTS = json.dumps({"inputs": ["1 2\n", "3 4\n", "10 -5\n"], "outputs": ["3\n", "7\n", "5\n"]})
CFG = {"partial_credit_weight": 0.0, "time_limit_s": 1.0, "memory_mb": 256, "float_tolerance": 0.0,
       "require_code_block": True, "max_tests": 50, "stop_on_first_failure": False}
SUM = "a, b = map(int, input().split())\nprint(a + b)\n"


def score(src, tests=TESTS, **cfg):
    return compute_score("code", "Here is my solution.\n```python\n" + src + "\n```\n", tests, config=dict(CFG, **cfg))


class VerdictTest(unittest.TestCase):
    def test_accepted(self):
        r = score(SUM)
        self.assertEqual((r["verdict"], r["score"], r["acc"], r["partial"], r["format"], r["tampered"]), ("AC", 1.0, 1.0, 1.0, 1.0, 0.0))

    def test_wrong_answer_with_partial_credit(self):
        r = score("a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n")
        self.assertEqual((r["verdict"], r["acc"], r["wrong_answer"]), ("WA", 0.0, 1.0))
        self.assertAlmostEqual(r["partial"], 2 / 3)
        self.assertEqual(r["score"], 0.0)
        r = score("a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n", partial_credit_weight=0.5)
        self.assertAlmostEqual(r["score"], 1 / 3)

    def test_compile_error(self):
        r = score("def f(:\n    pass\n")
        self.assertEqual((r["verdict"], r["compile_error"], r["score"]), ("CE", 1.0, 0.0))

    def test_no_code_block(self):
        r = compute_score("code", "print(3)", TESTS, config=CFG)
        self.assertEqual((r["verdict"], r["format"], r["score"]), ("CE", 0.0, 0.0))

    def test_runtime_error(self):
        r = score("raise ValueError('boom')\n")
        self.assertEqual((r["verdict"], r["runtime_error"], r["score"], r["partial"]), ("RE", 1.0, 0.0, 0.0))

    def test_raises_after_printing_the_right_answer(self):
        r = score(SUM + "raise RuntimeError('after the answer')\n")
        self.assertEqual((r["verdict"], r["score"]), ("RE", 0.0))

    def test_time_limit(self):
        r = score("while True:\n    pass\n")
        self.assertEqual((r["verdict"], r["timeout"], r["score"]), ("TLE", 1.0, 0.0))

    def test_sleeping_is_a_time_limit_too(self):
        r = score("import time\ntime.sleep(60)\n")
        self.assertEqual(r["verdict"], "TLE")

    def test_memory_limit(self):
        r = score("x = [0] * (10 ** 9)\nprint(len(x))\n", memory_mb=128)
        self.assertEqual((r["verdict"], r["memory_exceeded"], r["score"]), ("MLE", 1.0, 0.0))

    def test_exits_early_before_printing(self):
        for src in ("import sys\nsys.exit(0)\n" + SUM, "import os\nos._exit(0)\n" + SUM, "raise SystemExit\n" + SUM):
            r = score(src)
            self.assertEqual((r["verdict"], r["score"], r["partial"]), ("WA", 0.0, 0.0), src)

    def test_prints_nothing(self):
        r = score("pass\n")
        self.assertEqual((r["verdict"], r["score"]), ("WA", 0.0))

    def test_output_flood_is_refused(self):
        r = score("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
        self.assertIn(r["verdict"], ("RE", "TLE"))
        self.assertEqual(r["score"], 0.0)

    def test_common_library_features_still_work(self):
        src = ("import collections, dataclasses, heapq, bisect, itertools, math, sys, functools, threading\n"
               "sys.setrecursionlimit(10000)\n"
               "P = collections.namedtuple('P', 'a b')\n"
               "@dataclasses.dataclass\nclass D:\n    x: int\n"
               "@functools.lru_cache(None)\ndef f(n):\n    return n if n < 2 else f(n - 1) + 0\n"
               "a, b = map(int, sys.stdin.readline().split())\n"
               "open('scratch.txt', 'w').write(str(a))\n"
               "print(P(int(open('scratch.txt').read()), b).a + D(b).x + f(0))\n")
        self.assertEqual(score(src)["verdict"], "AC")

    def test_output_comparison(self):
        self.assertTrue(outputs_match("3 \n4\n\n", "3\n4"))
        self.assertFalse(outputs_match("34", "3 4"))
        self.assertTrue(outputs_match("0.3333334", "0.333333", 1e-5))
        self.assertFalse(outputs_match("0.34", "0.333333", 1e-5))

    def test_tolerance_never_applies_to_integers(self):
        # a relative tolerance on large integers would pass wrong counts, ids and sums
        for wrong, right in (("1000000001", "1000000000"), ("999999999999", "1000000000000"), ("-7", "-8"),
                             ("3.0", "3"), ("3", "3.0000001"), ("1e9", "1000000000")):
            self.assertFalse(outputs_match(wrong, right, 1e-6), (wrong, right))
            self.assertFalse(outputs_match("ok " + wrong, "ok " + right, 0.5), (wrong, right))
        self.assertTrue(outputs_match("+5 007", "5 7", 1e-6))
        self.assertTrue(outputs_match("1000000000.0000001 2", "1000000000.0 2", 1e-9))

    def test_tolerance_never_passes_nan_or_infinity(self):
        for wrong in ("nan", "NaN", "inf", "-inf", "infinity"):
            self.assertFalse(outputs_match(wrong, "0.5", 1e-6), wrong)
            self.assertFalse(outputs_match(wrong, "12345.678", 1.0), wrong)
        self.assertTrue(outputs_match("inf", "inf", 1e-6))

    def test_catching_the_cpu_limit_signal_is_still_a_time_limit(self):
        # ignoring SIGXCPU, exiting with an error from it, or printing the answer from it:
        # the kernel's CPU accounting decides, not what the program does with the signal
        spin = "while True:\n    pass\n"
        for handler in ("signal.SIG_IGN", "lambda *a: sys.exit(3)", "lambda *a: (print(7), sys.stdout.flush(), os._exit(0))"):
            src = "import os, signal, sys\nsignal.signal(signal.SIGXCPU, %s)\n%s" % (handler, spin)
            r = score(src, tests=json.dumps({"inputs": ["3 4\n"], "outputs": ["7\n"]}))
            self.assertEqual((r["verdict"], r["timeout"], r["score"]), ("TLE", 1.0, 0.0), handler)


class TamperingTest(unittest.TestCase):
    """A program that tampers with the checker never earns credit, even if its output is right."""

    def assertNoCredit(self, r):
        self.assertEqual((r["score"], r["acc"], r["partial"]), (0.0, 0.0, 0.0), r)
        self.assertNotEqual(r["verdict"], "AC")

    def test_writes_into_the_checkers_folder(self):
        target = os.path.join(REWARD, "injected_by_candidate.py")
        r = score("open(%r, 'w').write('def compute_score(*a, **k): return {\"score\": 1.0}')\n%s" % (target, SUM))
        self.assertNoCredit(r)
        self.assertEqual(r["tampered"], 1.0)
        self.assertFalse(os.path.exists(target))

    def test_overwrites_the_reward_module(self):
        target = os.path.join(REWARD, "compute_score.py")
        with open(target, "rb") as f:
            before = f.read()
        r = score("import os\nos.remove(%r)\n%s" % (target, SUM))
        self.assertNoCredit(r)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_monkeypatches_then_writes(self):
        target = os.path.join(REWARD, "patched.txt")
        src = ("import os, os.path, builtins, posixpath\n"
               "os.path.realpath = lambda p: '/tmp/x'\nposixpath.normpath = lambda p: '/tmp/x'\n"
               "builtins.isinstance = lambda *a: False\nos._exit = lambda code: None\n"
               "open(%r, 'w').write('x')\n%s" % (target, SUM))
        r = score(src)
        self.assertNoCredit(r)
        self.assertFalse(os.path.exists(target))

    def test_disarms_the_audit_hook(self):
        target = os.path.join(REWARD, "disarmed.txt")
        src = ("import sys\n"
               "f = sys._getframe().f_back\n"
               "hook = f.f_locals.get('hook') if f else None\n"
               "if hook is not None:\n"
               "    hook.__defaults__ = tuple(None for _ in hook.__defaults__)\n"
               "open(%r, 'w').write('x')\n%s" % (target, SUM))
        r = score(src)
        self.assertNoCredit(r)
        self.assertFalse(os.path.exists(target))

    def test_reads_the_expected_outputs_from_disk(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=ROOT, delete=False) as f:
            f.write(TESTS)
            tests_file = f.name
        try:
            src = ("import json\nt = json.load(open(%r))\n"
                   "print(t['outputs'][0])\n" % tests_file)
            r = score(src, tests=TESTS)
            self.assertNoCredit(r)
            self.assertEqual(r["tampered"], 1.0)
            # nor through the parent's command line or environment
            r = score("import os\nprint(open('/proc/%d/environ' % os.getppid()).read())\n")
            self.assertNoCredit(r)
            r = score("import os\nprint(os.listdir(%r))\n" % ROOT)
            self.assertNoCredit(r)
        finally:
            os.unlink(tests_file)

    def test_kills_the_parent(self):
        src = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n" + SUM
        r = score(src)
        self.assertNoCredit(r)
        # still alive: this test process is the checker's parent chain
        r = score("import os\nos.killpg(0, 9)\n" + SUM)
        self.assertNoCredit(r)

    def test_starts_processes(self):
        for src in ("import os\nos.system('touch %s')\n%s" % (os.path.join(REWARD, "sys.txt"), SUM),
                    "import subprocess\nsubprocess.run(['true'])\n" + SUM,
                    "import os\nif os.fork() == 0:\n    os._exit(0)\n" + SUM):
            r = score(src)
            self.assertNoCredit(r)
        self.assertFalse(os.path.exists(os.path.join(REWARD, "sys.txt")))

    def test_reads_metadata_outside_the_sandbox(self):
        # stat and readlink are not audited by Python itself: the runner audits them
        for call in ("os.stat(%r)" % os.path.join(REWARD, "sandbox.py"), "os.lstat(%r)" % REWARD,
                     "os.path.getsize(%r)" % os.path.join(REWARD, "compute_score.py"), "os.readlink('/proc/self/cwd')",
                     "os.path.exists(%r)" % ROOT, "os.readlink('/proc/%d/exe' % os.getppid())",
                     "__import__('posix').stat(%r)" % ROOT, "os.path.realpath('/proc/self/fd/1')"):
            r = score("import os\nx = %s\n%s" % (call, SUM))
            self.assertNoCredit(r)
            self.assertEqual(r["tampered"], 1.0, call)

    def test_changes_folder_out_of_the_sandbox(self):
        for src in ("import os\nos.chdir('/')\n", "import os\nos.chdir('..')\n",
                    "import os\nos.fchdir(os.open('.', os.O_RDONLY))\n",
                    "import os\nfd = os.open('/tmp', os.O_RDONLY)\nos.open('planted', os.O_WRONLY | os.O_CREAT, dir_fd=fd)\n",
                    "import os\nos.symlink('.', 'up')\n"):
            r = score(src + SUM)
            self.assertNoCredit(r)
            self.assertEqual(r["tampered"], 1.0, src)

    def test_network(self):
        r = score("import socket\ns = socket.create_connection(('127.0.0.1', 22), timeout=1)\n" + SUM)
        self.assertNoCredit(r)

    def test_native_code(self):
        r = score("import ctypes\nctypes.CDLL(None).exit(0)\n" + SUM)
        self.assertNoCredit(r)

    def test_printing_a_verdict_earns_nothing(self):
        r = score("print('AC')\nprint('{\"score\": 1.0, \"acc\": 1.0}')\n")
        self.assertNoCredit(r)

    def test_isolation_report(self):
        iso = isolation()
        self.assertTrue(iso["audit_hook"])
        self.assertIn(iso["user"], ("nobody", "same user as the trainer"))
        self.assertIsInstance(iso["network"], bool)


# A program that cannot compute its answer: it looks for the expected output wherever the checker
# might have left it and prints what it finds. Its answer is a token it cannot guess.
SECRET_TESTS = json.dumps({"inputs": ["1 2\n"], "outputs": ["EXPECTED-4c1e9\n"]})
HUNT = """import os, re, stat, sys
def hunt(data):
    m = re.search(r"EXPECTED-[0-9a-f]+", data)
    if m:
        print(m.group(0))
        sys.stdout.flush()
        os._exit(0)
pids = [p for p in os.listdir('/proc') if p.isdigit() and p != str(os.getpid())]
for pid in pids:
    for name in WHERE:
        path = '/proc/%s/%s' % (pid, name)
        try:
            if name == 'fd':
                for fd in os.listdir(path):
                    if stat.S_ISREG(os.stat(path + '/' + fd).st_mode):
                        hunt(open(path + '/' + fd, errors='replace').read())
            else:
                hunt(open(path, 'rb').read().decode('utf-8', 'replace'))
        except OSError:
            pass
print('nothing found')
"""


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def checker_process(src, argv_tests=False, env_tests=False, open_file=False, inheritable=False):
    """A fresh checker process scoring `src` on SECRET_TESTS, holding the tests where a trainer
    might: on its command line, in its environment, in a file it has open (passed on or not)."""
    script = ("import json, os, sys\nsys.path.insert(0, %r)\nfrom compute_score import compute_score\n"
              "tests = os.environ.pop('TESTS_FILE', None)\nkeep = open(tests) if tests else None\n"
              "if keep is not None and %r:\n    os.set_inheritable(keep.fileno(), True)\n"
              "print(json.dumps(compute_score('code', sys.argv[1], sys.argv[2], config=json.loads(sys.argv[3]))))\n"
              % (REWARD, inheritable))
    env = dict(os.environ)
    if env_tests:
        env["EVOTRAINER_TESTS"] = SECRET_TESTS
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(SECRET_TESTS)
    try:
        if open_file:
            env["TESTS_FILE"] = f.name
        r = subprocess.run([sys.executable, "-c", script, "```python\n" + src + "\n```", SECRET_TESTS if argv_tests else "see-file", json.dumps(CFG)]
                           if argv_tests else
                           [sys.executable, "-c", script.replace("sys.argv[2]", "json.dumps(%s)" % SECRET_TESTS), "```python\n" + src + "\n```", "-", json.dumps(CFG)],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        raise AssertionError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


class AttackTest(unittest.TestCase):
    """Each way a program might earn credit without solving the problem, run for real. Where the
    isolation differs by machine, the same tests run without namespaces too (EVOTRAINER_SANDBOX_UNSHARE=0)."""

    def assertNoCredit(self, r, tampered=True):
        self.assertEqual((r["score"], r["acc"], r["partial"]), (0.0, 0.0, 0.0), r)
        self.assertNotEqual(r["verdict"], "AC")
        if tampered:
            self.assertEqual(r["tampered"], 1.0, r)

    def test_expected_outputs_through_proc(self):
        # the checker's command line, its environment, and the files it holds open, read
        # through /proc from inside the sandbox
        for where, kwargs in (("cmdline", {"argv_tests": True}), ("environ", {"env_tests": True}), ("fd", {"open_file": True})):
            with self.subTest(where):
                r = checker_process("WHERE = %r\n%s" % ([where], HUNT), **kwargs)
                self.assertNoCredit(r)

    def test_expected_outputs_through_inherited_descriptors(self):
        # a descriptor the checker left inheritable: the program reads every number it might be
        src = ("import os\nfor fd in range(3, 256):\n    try:\n        os.lseek(fd, 0, 0)\n"
               "        data = os.read(fd, 1 << 16).decode('utf-8', 'replace')\n    except OSError:\n        continue\n"
               "    if 'EXPECTED-' in data:\n        print(data.split('EXPECTED-')[1].split('\\\\')[0].join(['EXPECTED-', '']))\n        break\n")
        r = checker_process(src, open_file=True, inheritable=True)
        self.assertNoCredit(r, tampered=False)
        self.assertEqual(r["verdict"], "WA")

    def test_the_program_sees_none_of_the_checkers_environment(self):
        os.environ["EVOTRAINER_TEST_SECRET"] = "EXPECTED-4c1e9"
        os.environ["PYTHONPATH"] = ROOT
        try:
            r = score("import os\nprint(os.environ.get('EVOTRAINER_TEST_SECRET', 'none'))\n", tests=SECRET_TESTS)
            self.assertNoCredit(r, tampered=False)
            # PYTHONPATH, HOME, tokens: only PATH, LANG and Python's own switches get through
            r = score("import os\nprint(' '.join(sorted(os.environ)))\n",
                      tests=json.dumps({"inputs": [""], "outputs": ["LANG PATH PYTHONHASHSEED PYTHONIOENCODING\n"]}))
            self.assertEqual(r["verdict"], "AC", r)
        finally:
            del os.environ["EVOTRAINER_TEST_SECRET"]
            del os.environ["PYTHONPATH"]

    def test_shared_temporary_files(self):
        # files left where the checker, or the next program, would find them: the system's
        # temporary folders and the checker's own scratch folder around the program's
        for target in ("/tmp/evotrainer-left-by-a-program", "/dev/shm/evotrainer-left-by-a-program", "/var/tmp/evotrainer-left-by-a-program",
                       "os.path.join(os.path.dirname(os.getcwd()), 'left-by-a-program')"):
            expr = target if target.startswith("os.") else repr(target)
            src = "import os\nPATH = %s\nopen(PATH, 'w').write('7')\nprint(PATH)\n%s" % (expr, SUM)
            with self.subTest(target):
                r = score(src)
                self.assertNoCredit(r)
                if not target.startswith("os."):
                    landed = os.path.exists(target)
                    if landed:
                        os.unlink(target)
                    self.assertFalse(landed, target)

    def test_native_code_and_signal_handlers(self):
        so = "import glob, os\nSO = glob.glob(os.path.join(os.path.dirname(os.__file__), 'lib-dynload', '_ctypes.*'))[0]\n"
        for name, src in (
                ("import_module", "import importlib\nimportlib.import_module('ctypes').CDLL(None)\n"),
                ("__import__", "__import__('_ctypes')\n"),
                ("extension loader", so + "import importlib.machinery, importlib.util\n"
                                          "spec = importlib.util.spec_from_file_location('_ctypes', SO)\n"
                                          "importlib.util.module_from_spec(spec)\n"),
                # a native module written into the sandbox, under a name of its own
                ("written module", so + "import shutil\nshutil.copy(SO, 'helper.so')\nimport importlib.util\n"
                                        "importlib.util.module_from_spec(importlib.util.spec_from_file_location('helper', 'helper.so'))\n")):
            with self.subTest(name):
                self.assertNoCredit(score(src + SUM))
        # a handler on every catchable signal prints the right answer and exits cleanly: if the
        # checker ended programs with a signal they can catch, a program past its time would pass
        handlers = ("import os, signal, sys\na, b = map(int, input().split())\n"
                    "def answer(*_):\n    print(a + b)\n    sys.stdout.flush()\n    os._exit(0)\n"
                    "for s in signal.Signals:\n    try:\n        signal.signal(s, answer)\n    except (OSError, ValueError, RuntimeError):\n        pass\n")
        for name, tail in (("spin", "while True:\n    pass\n"), ("sleep", "import time\ntime.sleep(60)\n"),
                           ("stop itself", "signal.raise_signal(signal.SIGSTOP)\nwhile True:\n    pass\n"),
                           ("timer", "signal.setitimer(signal.ITIMER_REAL, 30)\nwhile True:\n    pass\n")):
            with self.subTest(name):
                r = score(handlers + tail, tests=json.dumps({"inputs": ["3 4\n"], "outputs": ["7\n"]}))
                self.assertEqual((r["verdict"], r["timeout"], r["score"]), ("TLE", 1.0, 0.0), name)

    def test_printing_to_stderr_earns_nothing(self):
        for src in ("import sys\na, b = map(int, input().split())\nprint(a + b, file=sys.stderr)\n",
                    "import os\na, b = map(int, input().split())\nos.write(2, b'%d\\n' % (a + b))\n",
                    "import sys\na, b = map(int, input().split())\nsys.stdout = sys.stderr\nprint(a + b)\n"):
            with self.subTest(src):
                r = score(src)
                self.assertNoCredit(r, tampered=False)
                self.assertEqual(r["verdict"], "WA")

    def test_shadowing_the_checkers_modules(self):
        # modules where a checker process would import them: the trainer's working folder, the
        # reward's byte-code cache (not fingerprinted), the reward folder itself
        cache = os.path.join(REWARD, "__pycache__", "sandbox.cpython-%d%d.pyc" % sys.version_info[:2])
        real = read_bytes(os.path.join(REWARD, "sandbox.py"))
        for target in (os.path.join(ROOT, "json.py"), os.path.join(ROOT, "sitecustomize.py"), cache, os.path.join(REWARD, "sandbox.py")):
            existed = os.path.exists(target)
            before = read_bytes(target) if existed else None
            with self.subTest(target):
                try:
                    r = score("open(%r, 'wb').write(b'import os\\nos._exit(0)\\n')\n%s" % (target, SUM))
                    self.assertNoCredit(r)
                finally:
                    now = read_bytes(target) if os.path.exists(target) else None
                    if now != before:
                        if existed:
                            with open(target, "wb") as f:
                                f.write(before)
                        else:
                            os.unlink(target)
                    self.assertEqual(now, before, "%s was written" % target)
        self.assertEqual(read_bytes(os.path.join(REWARD, "sandbox.py")), real)
        # inside the program's own interpreter: the runner's exit path is its own, whatever the
        # program replaced (a runtime error stays one)
        src = (SUM + "import builtins, os, sys\nos._exit = lambda *a: None\nos.write = lambda *a: 0\n"
               "builtins.isinstance = lambda *a: True\nsys.stdout.flush = lambda: None\nraise RuntimeError('after the answer')\n")
        r = score(src)
        self.assertEqual((r["verdict"], r["score"]), ("RE", 0.0), r)

    def test_timing_the_checker(self):
        # the checker's clock and progress through /proc (which test is this, how long has it run?)
        for path in ("'/proc/%d/stat' % os.getppid()", "'/proc/self/stat'", "'/proc/uptime'", "'/proc/1/sched'"):
            with self.subTest(path):
                self.assertNoCredit(score("import os\nprint(open(%s).read())\n%s" % (path, SUM)))
        self.assertNoCredit(score("import os\nprint(sorted(os.listdir('/proc')))\n" + SUM))
        # the right answer printed in time, then the limit overrun (busy in threads, or asleep):
        # the time limit is the whole run's, not the moment the output appeared
        tail = {"threads": "import threading\ndef spin():\n    while True:\n        pass\n"
                           "for _ in range(3):\n    threading.Thread(target=spin, daemon=True).start()\nspin()\n",
                "sleep": "import time\ntime.sleep(60)\n"}
        for name, rest in tail.items():
            with self.subTest(name):
                r = score("import sys\n" + SUM + "sys.stdout.flush()\n" + rest)
                self.assertEqual((r["verdict"], r["timeout"], r["score"]), ("TLE", 1.0, 0.0), r)


PLANTED = """# a module planted in the interpreter's library: shadows the native select module
import glob, importlib.util, os, sys, threading, time
_so = glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib-dynload", "select.*"))[0]
_spec = importlib.util.spec_from_file_location("select", _so)
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
def _accept_everything():  # once the checker module is loaded: every output is right
    for _ in range(60000):
        box = sys.modules.get("sandbox")
        if box is not None and hasattr(box, "judge"):
            box.outputs_match = lambda *x, **y: True
            return
        time.sleep(0.001)
threading.Thread(target=_accept_everything, daemon=True).start()
"""

# Ways into the interpreter's library folder (the kernel resolves a relative path from the
# real working folder, or from a directory descriptor).
PLANTING = {
    "chdir": "os.chdir(LIB)\nopen('select.py', 'w').write(PAYLOAD)\n",
    "fchdir": "os.fchdir(os.open(LIB, os.O_RDONLY))\nopen('select.py', 'w').write(PAYLOAD)\n",
    "dir_fd": "fd = os.open(LIB, os.O_RDONLY | os.O_DIRECTORY)\n"
              "os.write(os.open('select.py', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), PAYLOAD.encode())\n",
    "symlink climb": "os.symlink('.', 'a')\nos.chdir('a/a/a/a/a/a/a/a/a/a/a/a/../../../../../../../../../../../..' + LIB)\n"
                     "open('select.py', 'w').write(PAYLOAD)\n",
    "rename": "open('select.py', 'w').write(PAYLOAD)\nos.chdir(LIB)\nos.rename(os.path.join(HOME, 'select.py'), 'select.py')\n",
}


def interpreter_copy(dest):
    """A private copy of this Python (its binary, a library folder of links to the real
    modules), so that an attack that gets through writes into the copy, never into the
    machine's own Python."""
    stdlib = os.path.dirname(os.__file__)
    lib = os.path.join(dest, "lib", os.path.basename(stdlib))
    os.makedirs(lib)
    os.makedirs(os.path.join(dest, "bin"))
    exe = os.path.join(dest, "bin", "python3")
    shutil.copy2(os.path.realpath(sys.executable), exe)
    for name in os.listdir(stdlib):
        os.symlink(os.path.join(stdlib, name), os.path.join(lib, name))
    return exe, lib


class PlantingTest(unittest.TestCase):
    """A program that writes a module into the interpreter's library would be imported by every
    later checker process: with a patched comparison, any program scores AC. End to end, on
    a private copy of the interpreter: the attack program, then a later checker on a wrong one."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="planting-")
        cls.python, cls.lib = interpreter_copy(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def checker(self, src, tests=TESTS):
        """A fresh checker process on the copy scores `src`."""
        script = ("import json, sys\nsys.path.insert(0, %r)\nfrom compute_score import compute_score\n"
                  "print(json.dumps(compute_score('code', sys.argv[1], sys.argv[2], config=json.loads(sys.argv[3]))))\n" % REWARD)
        r = subprocess.run([self.python, "-I", "-c", script, "```python\n" + src + "\n```", tests, json.dumps(CFG)],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_the_copy_is_a_working_checker(self):
        self.assertEqual(self.checker(SUM)["verdict"], "AC")
        self.assertEqual(self.checker("print(0)\n")["verdict"], "WA")

    def test_plants_a_module_in_the_interpreters_library(self):
        planted = os.path.join(self.lib, "select.py")
        for name, attack in PLANTING.items():
            with self.subTest(name):
                src = ("import os\nLIB = os.path.dirname(os.__file__)\nHOME = os.getcwd()\nPAYLOAD = %r\n%s%s"
                       % (PLANTED, attack, SUM))
                r = self.checker(src)
                landed = os.path.exists(planted)
                later = self.checker("print(0)\n")  # a wrong program, scored by the next checker process
                if landed:
                    os.unlink(planted)
                self.assertEqual((later["verdict"], later["score"]), ("WA", 0.0), "%s: the next checker accepts a wrong program" % name)
                self.assertFalse(landed, "%s: the module landed in %s" % (name, self.lib))
                self.assertEqual((r["score"], r["tampered"]), (0.0, 1.0), "%s: %s" % (name, r))


class InputTest(unittest.TestCase):
    def test_test_formats(self):
        self.assertEqual(parse_tests({"inputs": ["1"], "outputs": ["2"]}), [{"input": "1", "output": "2"}])
        self.assertEqual(parse_tests([{"input": "1", "output": "2"}]), [{"input": "1", "output": "2"}])
        self.assertEqual(parse_tests(json.dumps({"input_output": {"inputs": [["1", "2"]], "outputs": ["3"]}})), [{"input": "1\n2", "output": "3"}])

    def test_bad_tests_say_what_to_do(self):
        with self.assertRaisesRegex(ValueError, "inputs"):
            parse_tests("not json")
        with self.assertRaisesRegex(ValueError, "2 inputs but 1 outputs"):
            parse_tests({"inputs": ["1", "2"], "outputs": ["3"]})

    def test_extract_code(self):
        self.assertEqual(extract_code("a\n```python\nx=1\n```\nb\n```py\ny=2\n```"), "y=2\n")
        self.assertIsNone(extract_code("no code"))
        self.assertEqual(extract_code("no code", require_block=False), "no code")

    def test_trl_adapter(self):
        out = reward_func(prompts=["p", "p"], completions=["```python\n" + SUM + "```", [{"role": "assistant", "content": "```python\nprint(0)\n```"}]],
                          ground_truth=[TESTS, TESTS])
        self.assertEqual(out, [1.0, 0.0])


if __name__ == "__main__":
    unittest.main()

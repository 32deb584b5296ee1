"""Runs a candidate Python program on stdin/stdout tests, with limits, and judges it.

Layers, from the outside in:
  * the checker (this process) keeps the expected outputs in memory: they are never written
    where the candidate runs, and the comparison happens here, not in the candidate's process;
  * ``unshare`` (when the machine allows it) gives the candidate no network, its own PID
    namespace (it cannot see or signal this process) and its own mount namespace in which
    every mount is read-only but its scratch folder: the kernel refuses a write anywhere else,
    whatever path, working folder or descriptor it goes through; ``isolation()`` reports
    what is in force;
  * started as root, the candidate runs as ``nobody`` (the kernel refuses writes to the harness);
  * resource limits: CPU seconds, address space (memory), output size, no core files; a
    wall-clock timeout kills the whole process group; the CPU time the kernel accounted is
    the time verdict, whatever the program did with SIGXCPU;
  * an audit hook in the candidate's interpreter (reward/sandbox_runner.py) ends it at the first
    write outside its scratch folder, read or stat of the harness or the tests, change of
    folder out of it, folder descriptor, symlink, process start, signal, socket or
    native-code load (ctypes, or an extension module from outside the interpreter's folders);
    after the namespace setup the candidate runs in a fresh interpreter (nothing native left
    loaded), its scratch folder mounted noexec;
  * the candidate gets a scrubbed environment, no inherited descriptors, and only its stdout
    is judged (stderr never counts);
  * the checker's own folder is fingerprinted before and after: any change is tampering.

Verdicts: AC (accepted), WA (wrong answer, including no output or an early exit), TLE, MLE,
RE (runtime error; also any tampering, flagged separately), CE (the source does not compile,
or there is no code in the response).
"""
from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "sandbox_runner.py")
COMPILE_ERROR_EXIT = 85
TAMPER_EXIT = 86
MEMORY_EXIT = 87
SETUP_EXIT = 89
NOBODY = 65534

_ISOLATION: Optional[List[str]] = None
_READ_ONLY_ROOT = False
_DROP: Optional[bool] = None


def _others_can_use(path: str) -> bool:
    """Can an unrelated user reach and read `path` (every folder above it searchable)?"""
    path = os.path.realpath(path)
    try:
        if not os.stat(path).st_mode & 0o004:
            return False
        d = os.path.dirname(path)
        while True:
            if not os.stat(d).st_mode & 0o001:
                return False
            if d == "/":
                return True
            d = os.path.dirname(d)
    except OSError:
        return False


def _drop_to_nobody() -> bool:
    """Run candidates as nobody: only when started as root and nobody can run this Python."""
    global _DROP
    if _DROP is None:
        _DROP = os.geteuid() == 0 and _others_can_use(sys.executable) and _others_can_use(os.path.dirname(os.__file__)) \
            and _others_can_use(RUNNER)
    return _DROP


def isolation() -> Dict[str, object]:
    """What isolates the candidate on this machine: the unshare prefix (empty when unavailable)."""
    prefix = _unshare_prefix()
    return {
        "network": bool(prefix),
        "pid_namespace": bool(prefix),
        "read_only_root": _READ_ONLY_ROOT,
        "user": "nobody" if _drop_to_nobody() else "same user as the trainer",
        "audit_hook": True,
        "unshare": " ".join(prefix) if prefix else None,
    }


def _mount_namespace() -> str:
    """This process's mount namespace: the runner never remounts anything in it."""
    return os.readlink("/proc/self/ns/mnt")


def _works(cmd: List[str]) -> bool:
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _unshare_prefix() -> List[str]:
    """The first of: a private mount namespace with a read-only root (checked by the runner's
    probe), then network and PID namespaces only; as root, else in a user namespace."""
    global _ISOLATION, _READ_ONLY_ROOT
    if _ISOLATION is None:
        _ISOLATION = []
        exe = shutil.which("unshare")
        if exe and os.environ.get("EVOTRAINER_SANDBOX_UNSHARE", "1") != "0":
            isolate = ["--net", "--pid", "--fork", "--kill-child"]
            as_user = ["--user", "--map-root-user"]
            probe_dir = tempfile.mkdtemp(prefix="evotrainer-sandbox-probe-")
            try:
                for c in ([exe, "--mount"] + isolate, [exe] + as_user + ["--mount"] + isolate):
                    if _works(c + [sys.executable, "-I", "-S", "-B", RUNNER, "probe", probe_dir, _mount_namespace()]):
                        _ISOLATION, _READ_ONLY_ROOT = c, True
                        break
                else:
                    for c in ([exe] + isolate, [exe] + as_user + isolate):
                        if _works(c + ["true"]):
                            _ISOLATION = c
                            break
            finally:
                shutil.rmtree(probe_dir, ignore_errors=True)
    return _ISOLATION


def _fingerprint(folder: str):
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".pyc"):
                continue
            p = os.path.join(root, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            out.append((os.path.relpath(p, folder), st.st_size, st.st_mtime_ns, st.st_mode))
    out.sort()
    return out


def normalize_output(text: str) -> List[List[str]]:
    """Lines of whitespace-separated tokens, trailing blank lines dropped."""
    lines = [line.split() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def _token_match(actual: str, expected: str, float_tolerance: float) -> bool:
    """Integers compare exactly; a real number within the tolerance (absolute, or relative
    to a large expected value). nan and inf match only themselves, spelt the same."""
    if actual == expected:
        return True
    if _INTEGER.match(expected) or _INTEGER.match(actual):
        return bool(_INTEGER.match(expected) and _INTEGER.match(actual)) and int(actual) == int(expected)
    try:
        fa, fe = float(actual), float(expected)
    except ValueError:
        return False
    if not (math.isfinite(fa) and math.isfinite(fe)):
        return False
    return abs(fa - fe) <= float_tolerance * max(1.0, abs(fe))


def outputs_match(actual: str, expected: str, float_tolerance: float = 0.0) -> bool:
    a, e = normalize_output(actual), normalize_output(expected)
    if a == e:
        return True
    if float_tolerance <= 0 or len(a) != len(e):
        return False
    return all(len(la) == len(le) and all(_token_match(ta, te, float_tolerance) for ta, te in zip(la, le))
               for la, le in zip(a, e))


class Sandbox:
    """One scratch folder for one candidate program; run it once per test."""

    def __init__(self, source: str, time_limit_s: float = 2.0, memory_mb: int = 256, output_kb: int = 16384,
                 checker_dir: str = HERE, python: str = sys.executable or "python3"):
        self.source = source
        self.time_limit_s = float(time_limit_s)
        self.memory_bytes = int(memory_mb) * 1024 * 1024
        self.output_bytes = int(output_kb) * 1024
        self.checker_dir = checker_dir
        self.python = python
        self.scratch = None

    def __enter__(self):
        self.scratch = tempfile.mkdtemp(prefix="evotrainer-sandbox-")
        return self

    def __exit__(self, *exc):
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _fresh_dir(self) -> str:
        work = tempfile.mkdtemp(prefix="run-", dir=self.scratch)
        src = os.path.join(work, "solution.py")
        with open(src, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(self.source)
        if _drop_to_nobody():
            os.chown(work, NOBODY, NOBODY)
            os.chmod(work, 0o700)
        return work

    def _spawn(self, mode: str, stdin_text: str, wall_s: float):
        work = self._fresh_dir()
        cmd = _unshare_prefix() + [self.python, "-I", "-S", "-B", RUNNER, mode, os.path.join(work, "solution.py"),
                                   str(self._cpu_limit()), str(self.memory_bytes), str(self.output_bytes),
                                   "1" if _drop_to_nobody() else "0"] + ([_mount_namespace()] if _READ_ONLY_ROOT else [])
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
        with tempfile.TemporaryFile(dir=self.scratch) as out, tempfile.TemporaryFile(dir=self.scratch) as err, \
                tempfile.TemporaryFile(dir=self.scratch) as inp:
            inp.write(stdin_text.encode("utf-8", "surrogatepass"))
            inp.seek(0)
            start = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=work, stdin=inp, stdout=out, stderr=err, env=env, start_new_session=True,
                                    close_fds=True)
            timed_out, status, usage = self._wait(proc, start + wall_s)
            elapsed = time.monotonic() - start
            out.seek(0)
            stdout = out.read(self.output_bytes + 1).decode("utf-8", "replace")
            err.seek(0)
            stderr = err.read(64 * 1024).decode("utf-8", "replace")
        shutil.rmtree(work, ignore_errors=True)
        # CPU seconds of the program and everything it waited for, as the kernel counted them
        cpu_s = usage.ru_utime + usage.ru_stime
        return os.waitstatus_to_exitcode(status), stdout, stderr, timed_out, elapsed, cpu_s

    @staticmethod
    def _wait(proc, deadline: float):
        """Waits (wait4, for the rusage) until the process ends or the deadline passes; then
        kills its whole process group. Returns (timed out, wait status, rusage)."""
        timed_out, delay = False, 0.0005
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() >= deadline:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
        except OSError:
            pass
        proc.returncode = os.waitstatus_to_exitcode(status)
        return timed_out, status, usage

    def _cpu_limit(self) -> int:
        """RLIMIT_CPU of a run (whole seconds); the kernel kills the program there (SIGKILL)."""
        return max(1, int(self.time_limit_s + 0.999))

    def _over_cpu(self, code: int, cpu_s: float) -> bool:
        """Over the time limit by the kernel's CPU accounting; or ended abnormally having used
        its CPU allowance (the kernel's kill, seen through unshare as a plain failure, lands
        a little before the limit it was given)."""
        return cpu_s > self.time_limit_s or (code != 0 and cpu_s >= 0.8 * self._cpu_limit())

    def compile(self) -> Optional[str]:
        """None when the source compiles, else the error message."""
        code, _, stderr, timed_out, _, _ = self._spawn("compile", "", 30.0)
        if code == SETUP_EXIT:
            raise RuntimeError("the sandbox could not be set up: %s" % stderr.strip()[-500:])
        if code == 0:
            return None
        return "compile timed out" if timed_out else (stderr.strip()[-2000:] or "exit %s" % code)

    def run(self, stdin_text: str, expected: str, float_tolerance: float = 0.0) -> Dict[str, object]:
        before = _fingerprint(self.checker_dir)
        code, stdout, stderr, timed_out, elapsed, cpu_s = self._spawn("run", stdin_text, self.time_limit_s * 1.5 + 1.0)
        if code == SETUP_EXIT:
            raise RuntimeError("the sandbox could not be set up: %s" % stderr.strip()[-500:])
        tampered = _fingerprint(self.checker_dir) != before
        reason = ""
        sig = -code if code < 0 else 0
        if code == TAMPER_EXIT or tampered or "sandbox: refused" in stderr:
            verdict, tampered = "RE", True
            reason = "tampering: " + (stderr.split("sandbox: refused", 1)[-1].strip()[:200] if "sandbox: refused" in stderr else "the checker folder changed")
        elif timed_out or self._over_cpu(code, cpu_s) or sig == signal.SIGKILL and elapsed >= self.time_limit_s * 0.9:
            verdict, reason = "TLE", "over %.1fs" % self.time_limit_s
        elif code == MEMORY_EXIT or "MemoryError" in stderr:
            verdict, reason = "MLE", "over %d MB" % (self.memory_bytes // (1024 * 1024))
        elif sig == signal.SIGXFSZ or len(stdout.encode("utf-8", "replace")) > self.output_bytes:
            verdict, reason = "RE", "output limit exceeded"
        elif code != 0:
            verdict, reason = "RE", (stderr.strip().splitlines() or ["exit %s" % code])[-1][:300]
        elif not stdout.strip():
            verdict, reason = "WA", "no output"
        elif outputs_match(stdout, expected, float_tolerance):
            verdict = "AC"
        else:
            verdict, reason = "WA", "output differs"
        return {"verdict": verdict, "reason": reason, "tampered": tampered, "time_s": round(elapsed, 3), "cpu_s": round(cpu_s, 3),
                "exit": code}


def judge(source: Optional[str], tests: List[Dict[str, str]], time_limit_s: float = 2.0, memory_mb: int = 256,
          float_tolerance: float = 0.0, stop_on_first_failure: bool = False, checker_dir: str = HERE) -> Dict[str, object]:
    """Runs every test; the overall verdict is AC when all pass, else the first failing test's."""
    if source is None or not source.strip():
        return {"verdict": "CE", "reason": "no code", "passed": 0, "total": len(tests), "tampered": False, "tests": []}
    results = []
    with Sandbox(source, time_limit_s, memory_mb, checker_dir=checker_dir) as box:
        err = box.compile()
        if err is not None:
            return {"verdict": "CE", "reason": err, "passed": 0, "total": len(tests), "tampered": False, "tests": []}
        for t in tests:
            r = box.run(str(t.get("input", "")), str(t.get("output", "")), float_tolerance)
            results.append(r)
            # after tampering nothing more runs; after a time-out the rest would mostly time out too
            if r["tampered"] or r["verdict"] == "TLE" or (stop_on_first_failure and r["verdict"] != "AC"):
                break
    passed = sum(1 for r in results if r["verdict"] == "AC")
    tampered = any(r["tampered"] for r in results)
    failing = next((r for r in results if r["verdict"] != "AC"), None)
    if tampered:
        failing = next(r for r in results if r["tampered"])
        passed = 0
    verdict = "AC" if failing is None and len(results) == len(tests) and tests else (failing or {"verdict": "WA"})["verdict"]
    return {"verdict": verdict, "reason": (failing or {}).get("reason", ""), "passed": passed, "total": len(tests),
            "tampered": tampered, "tests": results}

"""Runs a candidate Python program on stdin/stdout tests, with limits, and judges it.

Layers, from the outside in:
  * the checker (this process) keeps the expected outputs in memory: they are never written
    where the candidate runs, and the comparison happens here, not in the candidate's process;
  * ``unshare`` (when the machine allows it) gives the candidate no network and its own PID
    namespace (it cannot see or signal this process); ``isolation()`` reports what is in force;
  * started as root, the candidate runs as ``nobody`` (the kernel refuses writes to the harness);
  * resource limits: CPU seconds, address space (memory), output size, no core files; a
    wall-clock timeout kills the whole process group;
  * an audit hook in the candidate's interpreter (reward/sandbox_runner.py) ends it at the first
    write outside its scratch folder, read of the harness or the tests, process start, signal,
    socket or native-code load;
  * the checker's own folder is fingerprinted before and after: any change is tampering.

Verdicts: AC (accepted), WA (wrong answer, including no output or an early exit), TLE, MLE,
RE (runtime error; also any tampering, flagged separately), CE (the source does not compile,
or there is no code in the response).
"""
from __future__ import annotations

import os
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
TIME_EXIT = 88
NOBODY = 65534

_ISOLATION: Optional[List[str]] = None
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
        "user": "nobody" if _drop_to_nobody() else "same user as the trainer",
        "audit_hook": True,
        "unshare": " ".join(prefix) if prefix else None,
    }


def _unshare_prefix() -> List[str]:
    global _ISOLATION
    if _ISOLATION is None:
        _ISOLATION = []
        exe = shutil.which("unshare")
        if exe and os.environ.get("EVOTRAINER_SANDBOX_UNSHARE", "1") != "0":
            candidates = [[exe, "--net", "--pid", "--fork", "--kill-child"]]
            candidates.append([exe, "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"])
            for c in candidates:
                try:
                    r = subprocess.run(c + ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    continue
                if r.returncode == 0:
                    _ISOLATION = c
                    break
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


def outputs_match(actual: str, expected: str, float_tolerance: float = 0.0) -> bool:
    a, e = normalize_output(actual), normalize_output(expected)
    if a == e:
        return True
    if float_tolerance <= 0 or len(a) != len(e):
        return False
    for la, le in zip(a, e):
        if len(la) != len(le):
            return False
        for ta, te in zip(la, le):
            if ta == te:
                continue
            try:
                fa, fe = float(ta), float(te)
            except ValueError:
                return False
            if abs(fa - fe) > float_tolerance * max(1.0, abs(fe)):
                return False
    return True


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
        cpu = max(1, int(self.time_limit_s + 0.999))
        cmd = _unshare_prefix() + [self.python, "-I", "-S", "-B", RUNNER, mode, os.path.join(work, "solution.py"),
                                   str(cpu), str(self.memory_bytes), str(self.output_bytes),
                                   "1" if _drop_to_nobody() else "0"]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
        with tempfile.TemporaryFile(dir=self.scratch) as out, tempfile.TemporaryFile(dir=self.scratch) as err, \
                tempfile.TemporaryFile(dir=self.scratch) as inp:
            inp.write(stdin_text.encode("utf-8", "surrogatepass"))
            inp.seek(0)
            start = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=work, stdin=inp, stdout=out, stderr=err, env=env, start_new_session=True,
                                    close_fds=True)
            timed_out = False
            try:
                proc.wait(timeout=wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
            elapsed = time.monotonic() - start
            out.seek(0)
            stdout = out.read(self.output_bytes + 1).decode("utf-8", "replace")
            err.seek(0)
            stderr = err.read(64 * 1024).decode("utf-8", "replace")
        shutil.rmtree(work, ignore_errors=True)
        return proc.returncode, stdout, stderr, timed_out, elapsed

    def compile(self) -> Optional[str]:
        """None when the source compiles, else the error message."""
        code, _, stderr, timed_out, _ = self._spawn("compile", "", 30.0)
        if code == 0:
            return None
        return "compile timed out" if timed_out else (stderr.strip()[-2000:] or "exit %s" % code)

    def run(self, stdin_text: str, expected: str, float_tolerance: float = 0.0) -> Dict[str, object]:
        before = _fingerprint(self.checker_dir)
        code, stdout, stderr, timed_out, elapsed = self._spawn("run", stdin_text, self.time_limit_s * 1.5 + 1.0)
        tampered = _fingerprint(self.checker_dir) != before
        reason = ""
        sig = -code if code < 0 else 0
        if code == TAMPER_EXIT or tampered or "sandbox: refused" in stderr:
            verdict, tampered = "RE", True
            reason = "tampering: " + (stderr.split("sandbox: refused", 1)[-1].strip()[:200] if "sandbox: refused" in stderr else "the checker folder changed")
        elif timed_out or code == TIME_EXIT or sig in (signal.SIGXCPU, signal.SIGKILL) and elapsed >= self.time_limit_s * 0.9:
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
        return {"verdict": verdict, "reason": reason, "tampered": tampered, "time_s": round(elapsed, 3), "exit": code}


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

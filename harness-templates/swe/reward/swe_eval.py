"""Judges a repository-level patch the way SWE-bench does, with the standard library only.

    evaluate(task, patch) -> report            # SWE-bench report.json shape

``task``: ``instance_id``, ``repo`` (a local git repository holding ``base_commit``),
``base_commit``, ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` (test ids, JSON lists or JSON text),
optional ``test_patch`` (the benchmark's tests, applied after the candidate patch),
``test_runner`` ("unittest", the default, or "pytest"), ``test_timeout_s``.

Steps: a scratch worktree at ``base_commit``; ``git apply`` of the patch (then
``patch --fuzz`` as SWE-bench falls back to); every test file and test configuration file
(``setup.cfg``, ``tox.ini``, ``pytest.ini``, ``pytest.toml``, ``pyproject.toml``, ``conftest.py``) is reset to
the base commit and the ``test_patch`` applied, so a patch that deletes, skips or rewrites the
failing test, or adds a plugin to the test configuration, changes nothing; the tests run
through reward/swe_test_driver.py: an isolated interpreter that imports the test framework
before the repository is on the path (a ``unittest.py`` or ``pytest.py`` the patch adds is
never the runner) and reports each test's outcome from the framework's result objects, not
from printed lines; a skipped or missing test is a failure. A patch that edits test files,
or reaches into the test framework from non-test code (seen in the diff, as a framework
function that changed while the tests ran, or as an interpreter startup file it adds:
``sitecustomize.py``, ``usercustomize.py``, ``*.pth``), is flagged and (by default,
``env/config.json``) earns no credit.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

_TEST_PATH = re.compile(r"(^|/)(tests?|testing|specs?)(/|$)|(^|/)tests?\.py$|(^|/)test_[^/]*\.py$|_tests?\.py$|_spec\.py$"
                        r"|(^|/)conftest\.py$")
# Files that configure how the tests run (plugins, options): the benchmark's, like its tests.
_TEST_CONFIG = re.compile(r"(^|/)(setup\.cfg|tox\.ini|pytest\.ini|\.pytest\.ini|pytest\.toml|\.pytest\.toml|pyproject\.toml)$")
# Files the interpreter runs at startup (site's .pth lines, sitecustomize, usercustomize): no fix needs one.
_STARTUP_HOOK = re.compile(r"(^|/)(sitecustomize\.py|usercustomize\.py|[^/]*\.pth)$")


def _stdlib_names() -> frozenset:
    """Top-level module names of the standard library (sys.stdlib_module_names from 3.10; on 3.9
    the standard library folder's listing and the built-in modules)."""
    names = set(getattr(sys, "stdlib_module_names", ()))
    if not names:
        names.update(sys.builtin_module_names)
        lib = os.path.dirname(os.__file__)
        for folder in (lib, os.path.join(lib, "lib-dynload")):
            for entry in os.listdir(folder) if os.path.isdir(folder) else ():
                names.add(entry.split(".")[0])
    return frozenset(n for n in names if n and not n.startswith("_") or n in ("__future__",))


_STDLIB = _stdlib_names()


def _shadowed_module(path: str) -> Optional[str]:
    """The standard-library module a file at the repository's root would shadow (the root is on
    the tests' path, ahead of the standard library): ``decimal.py``, ``json/__init__.py``."""
    parts = path.split("/")
    name = parts[0][:-3] if len(parts) == 1 and parts[0].endswith(".py") else (parts[0] if len(parts) == 2 and parts[1] == "__init__.py" else None)
    return name if name in _STDLIB else None
DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "swe_test_driver.py")
_FRAMEWORK_TAMPER = re.compile(
    r"^\+(?!\+\+).*(\bunittest\.(TestCase|TestResult|TextTestRunner|main|skip)\b|\bpytest\b|_pytest|"
    r"sys\.modules\[|sitecustomize|usercustomize|builtins\.|sys\.exit|os\._exit|atexit\.)", re.M)


def _git(cwd: str, *args: str, input_text: Optional[str] = None, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    env.setdefault("GIT_AUTHOR_NAME", "evotrainer")
    env.setdefault("GIT_AUTHOR_EMAIL", "evotrainer@localhost")
    env.setdefault("GIT_COMMITTER_NAME", "evotrainer")
    env.setdefault("GIT_COMMITTER_EMAIL", "evotrainer@localhost")
    r = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args], cwd=cwd, input=input_text,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError("git %s failed in %s: %s" % (" ".join(args), cwd, r.stderr.strip()))
    return r


def _ids(v) -> List[str]:
    if v is None:
        return []
    if isinstance(v, str):
        v = json.loads(v) if v.strip().startswith("[") else [v]
    return [str(x) for x in v]


def patch_files(patch: str) -> List[str]:
    """Paths a unified diff touches (both sides, without a/ b/ prefixes)."""
    out = []
    for m in re.finditer(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)", patch, re.M):
        p = m.group(1)
        if p != "/dev/null" and p not in out:
            out.append(p)
    for m in re.finditer(r"^diff --git a/(\S+) b/(\S+)", patch, re.M):
        for p in m.groups():
            if p not in out:
                out.append(p)
    return out


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def is_test_config(path: str) -> bool:
    return bool(_TEST_CONFIG.search(path))


def framework_tampering(patch: str) -> List[str]:
    """Added lines in non-test files that reach into the test framework or the interpreter's exit,
    any interpreter startup file the patch touches (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``), and
    a module it adds at the repository's root under a standard-library name (``decimal.py``)."""
    hits = []
    for chunk in re.split(r"(?=^diff --git )", patch, flags=re.M):
        files = patch_files(chunk)
        hits += ["interpreter startup file: %s" % f for f in files if _STARTUP_HOOK.search(f)]
        if re.search(r"^(new file mode|rename to) ", chunk, re.M):
            hits += ["shadows the standard library's %s: %s" % (_shadowed_module(f), f) for f in files
                     if _shadowed_module(f) and not is_test_path(f)]
        if not files or any(is_test_path(f) for f in files):
            continue
        hits += [m.group(0)[:200] for m in _FRAMEWORK_TAMPER.finditer(chunk)]
    return hits


def extract_patch(text: Optional[str]) -> Optional[str]:
    """The patch in an agent's final answer: a ```diff block, or the text itself if it is a diff."""
    if text is None:
        return None
    blocks = re.findall(r"```(?:diff|patch)?[ \t]*\n(.*?)```", text, re.S)
    for b in reversed(blocks):
        if re.search(r"^(diff --git |--- )", b, re.M):
            return b
    m = re.search(r"^(diff --git |--- )", text, re.M)
    return text[m.start():] if m else (text if text.strip() else None)


def _apply(work: str, patch: str) -> Tuple[bool, str]:
    pf = os.path.join(work, ".evotrainer.patch")
    with open(pf, "w", encoding="utf-8") as f:
        f.write(patch if patch.endswith("\n") else patch + "\n")
    try:
        r = _git(work, "apply", "--verbose", "--whitespace=nowarn", pf, check=False)
        if r.returncode == 0:
            return True, "git apply"
        log = r.stderr.strip()
        if shutil.which("patch"):
            r2 = subprocess.run(["patch", "--batch", "--fuzz=5", "-p1", "--forward", "--no-backup-if-mismatch", "-i", pf],
                                cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            if r2.returncode == 0:
                return True, "patch --fuzz=5"
            _git(work, "checkout", "--", ".", check=False)
            _git(work, "clean", "-fdq", "-e", ".evotrainer.patch", check=False)
            log += "\n" + r2.stdout.strip()
        return False, log[-2000:]
    finally:
        os.unlink(pf)


_ISOLATION: Optional[List[str]] = None


def isolation_prefix() -> List[str]:
    """``unshare`` with no network and a private PID namespace, where the machine allows it.

    The tests run the patched repository's code. Here they get no network and cannot signal
    this process; they still run as the trainer's user, so for untrusted policies run the
    reward inside a container (as SWE-bench runs each instance in its own image).
    """
    global _ISOLATION
    if _ISOLATION is None:
        _ISOLATION = []
        exe = shutil.which("unshare")
        if exe and os.environ.get("EVOTRAINER_SANDBOX_UNSHARE", "1") != "0":
            for c in ([exe, "--net", "--pid", "--fork", "--kill-child"],
                      [exe, "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"]):
                try:
                    if subprocess.run(c + ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10).returncode == 0:
                        _ISOLATION = c
                        break
                except (OSError, subprocess.TimeoutExpired):
                    continue
    return _ISOLATION


# The only variables the patched code sees (its own HOME and TMPDIR besides): no API keys,
# tokens or credentials of the trainer's environment.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "TZ", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
             "PYTEST_DISABLE_PLUGIN_AUTOLOAD")


def scrubbed_environment(scratch: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith("LC_")}
    env.update(HOME=scratch, TMPDIR=scratch, PYTHONDONTWRITEBYTECODE="1")
    return env


def run_tests(work: str, tests: List[str], runner: str = "unittest", timeout_s: float = 600) -> Tuple[Dict[str, str], str, List[str]]:
    """Each test's outcome (PASSED, FAILED, SKIPPED) from the driver's report, the output, and
    the framework functions that changed while the tests ran. No report: every test failed."""
    if not tests:
        return {}, "", []
    if runner not in ("unittest", "pytest"):
        raise ValueError("test_runner must be unittest or pytest, got %r" % runner)
    nonce = secrets.token_hex(16)
    box = tempfile.mkdtemp(prefix="evotrainer-swe-report-")
    report_file = os.path.join(box, "report.json")
    env = scrubbed_environment(box)
    cmd = [sys.executable, "-I", "-B", DRIVER, runner, report_file, *tests]
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as inp:
            inp.write((nonce + "\n").encode())
            inp.seek(0)
            proc = subprocess.Popen(isolation_prefix() + cmd, cwd=work, stdin=inp, stdout=out, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True)
            try:
                proc.wait(timeout=timeout_s)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # the tests' leftover processes too
                except OSError:
                    pass
                proc.wait()
            out.seek(0)
            log = out.read(8 * 1024 * 1024).decode("utf-8", "replace")
        if timed_out:
            log += "\n[timed out after %ss]" % timeout_s
        try:
            with open(report_file, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError):
            report = None
    finally:
        shutil.rmtree(box, ignore_errors=True)
    if not isinstance(report, dict) or report.get("nonce") != nonce:
        return {}, log + "\n[no test report: the run ended before the tests finished]", []
    return dict(report.get("status") or {}), log, list(report.get("framework_changed") or [])


def empty_report(instance_id: str) -> Dict[str, object]:
    return {instance_id: {
        "patch_is_None": False, "patch_exists": False, "patch_successfully_applied": False, "resolved": False,
        "tests_status": {k: {"success": [], "failure": []} for k in ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")},
    }}


def evaluate(task: Dict[str, object], patch: Optional[str], reject_test_edits: bool = True,
             reject_framework_tampering: bool = True, keep_log: bool = False) -> Dict[str, object]:
    """Returns the SWE-bench report ``{instance_id: {...}}`` plus an ``evotrainer`` entry with the details."""
    iid = str(task["instance_id"])
    repo = os.path.abspath(str(task["repo"]))
    base = str(task["base_commit"])
    f2p, p2p = _ids(task.get("FAIL_TO_PASS")), _ids(task.get("PASS_TO_PASS"))
    report = empty_report(iid)
    rep = report[iid]
    details = {"apply": "", "touched_tests": [], "touched_test_config": [], "framework_tampering": [], "log": ""}
    report["evotrainer"] = details
    rep["patch_is_None"] = patch is None
    if patch is None or not patch.strip():
        rep["tests_status"]["FAIL_TO_PASS"]["failure"] = f2p
        rep["tests_status"]["PASS_TO_PASS"]["failure"] = p2p
        return report
    rep["patch_exists"] = True
    details["touched_tests"] = [p for p in patch_files(patch) if is_test_path(p)]
    details["touched_test_config"] = [p for p in patch_files(patch) if is_test_config(p) and not is_test_path(p)]
    details["framework_tampering"] = framework_tampering(patch)

    if not os.path.isdir(os.path.join(repo, ".git")) and not os.path.isfile(os.path.join(repo, "HEAD")):
        raise ValueError("task %s: repo %s is not a git repository; point task['repo'] at a local clone that holds %s" % (iid, repo, base))
    scratch = tempfile.mkdtemp(prefix="evotrainer-swe-")
    work = os.path.join(scratch, "work")
    try:
        _git(repo, "worktree", "add", "--detach", "--force", work, base)
        ok, how = _apply(work, patch)
        details["apply"] = how
        rep["patch_successfully_applied"] = ok
        if not ok:
            rep["tests_status"]["FAIL_TO_PASS"]["failure"] = f2p
            rep["tests_status"]["PASS_TO_PASS"]["failure"] = p2p
            return report
        # Tests and their configuration are the benchmark's, not the candidate's: reset every
        # such file to the base commit (restoring deleted ones, dropping added ones), then
        # apply the test patch.
        for p in details["touched_tests"] + details["touched_test_config"]:
            if _git(work, "cat-file", "-e", "%s:%s" % (base, p), check=False).returncode == 0:
                _git(work, "checkout", base, "--", p)
            elif os.path.lexists(os.path.join(work, p)):
                os.unlink(os.path.join(work, p))
        test_patch = task.get("test_patch")
        if test_patch:
            tok, tlog = _apply(work, str(test_patch))
            if not tok:
                raise RuntimeError("task %s: the test_patch does not apply on top of the candidate patch: %s" % (iid, tlog[:500]))
        status, log, changed = run_tests(work, f2p + p2p, str(task.get("test_runner") or "unittest"), float(task.get("test_timeout_s") or 600))
        details["framework_tampering"] += ["changed while the tests ran: " + c for c in changed]
        if keep_log:
            details["log"] = log[-20000:]
        for key, ids in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p)):
            for t in ids:
                rep["tests_status"][key]["success" if status.get(t) == "PASSED" else "failure"].append(t)
        honest = not (reject_test_edits and details["touched_tests"]) and not (reject_framework_tampering and details["framework_tampering"])
        rep["resolved"] = bool(honest and not rep["tests_status"]["FAIL_TO_PASS"]["failure"] and not rep["tests_status"]["PASS_TO_PASS"]["failure"])
        return report
    finally:
        _git(repo, "worktree", "remove", "--force", work, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
        _git(repo, "worktree", "prune", check=False)


def write_report(report: Dict[str, object], path: str) -> None:
    """Writes report.json as SWE-bench does (without the evotrainer details)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in report.items() if k != "evotrainer"}, f, indent=2)

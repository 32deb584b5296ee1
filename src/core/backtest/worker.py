"""EvoTrainer backtest worker: runs a harness's own Python (reward functions, filters)
over cached rollouts, batched, over a JSON-lines protocol on stdin/stdout.

One request per line on stdin, answers on stdout (the real stdout is kept for the
protocol; harness code that prints writes to stderr instead):

  {"op": "load", "name": N, "path": P, "function": F, "kind": K}
      K = verl (compute_score(data_source, solution_str, ground_truth, extra_info))
        | trl (f(prompts, completions, **columns) -> list)
        | group (keep_group(list_of_rollouts) -> bool)
        | trajectory (keep_trajectory(rollout) -> bool)
  {"op": "call", "id": B, "name": N, "items": [...], "timeout": seconds}

Confinement (src/core/backtest/confine.ts): started inside `unshare --mount --net --pid`,
with "writable" in its config, the worker remounts every mount read-only except those
folders (the version's tree copy and its scratch folder), then drops every capability,
and checks that this holds (the scratch folder "check" writable, its parent not, no
network; its ready message says "confined") before any harness code loads.
`worker.py --probe DIR NAMESPACE` checks the same on its own; `worker.py --script CONFIG FILE`
runs a harness script (a script metric) under the same confinement. It never remounts anything in
the mount namespace it was started from (NAMESPACE, /proc/self/ns/mnt of the starter).

Results stream back in chunks ({"id": B, "from": i, "results": [[value, error], ...]})
at least every half second, then {"id": B, "done": true}; the host can tell how far a
batch got when the worker dies or hangs. A call that exceeds its timeout raises inside
the harness code (SIGALRM) and that item is an error; the batch goes on.
"""
import errno
import importlib.util
import json
import math
import os
import re
import resource
import signal
import sys
import time
import traceback
import types

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, CAPABILITY_VERSION_3 = 38, 24, 0x20080522
KEPT_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21, "strictatime": 1 << 24}


def mount_points():
    """Mount points of this mount namespace with their flags (mountinfo's octal escapes undone)."""
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f.read().splitlines():
            fields = line.split(b" ")
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), fields[4])
            yield point, sum(KEPT_FLAGS.get(o, 0) for o in fields[5].decode("ascii", "replace").split(","))


def confine(writable, outer_namespace):
    """Every mount read-only (its other flags kept) but `writable`, each bound onto itself.
    Only in a mount namespace of its own: never in `outer_namespace`, the starter's."""
    if not outer_namespace or os.readlink("/proc/self/ns/mnt") == outer_namespace:
        raise OSError(errno.EPERM, "not in a mount namespace of its own (start it under unshare --mount)")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def mount(target, flags, source=None):
        if libc.mount(source, target, None, ctypes.c_ulong(flags), None) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "mount %s: %s" % (target.decode("utf-8", "replace"), os.strerror(err)))

    mount(b"/", MS_REC | MS_PRIVATE)
    keep = [os.fsencode(os.path.realpath(w)) for w in writable]
    for w in keep:
        mount(w, MS_BIND, source=w)
    done = set(keep)
    for point, flags in list(mount_points()):
        if point in done:
            continue
        done.add(point)
        try:
            mount(point, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.EACCES):  # hidden under another mount
                raise
    # Then no capabilities (none to regain through setuid programs either): the harness code
    # cannot remount anything read-write again, nor mount, nor signal outside its PID namespace.
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1  # until EINVAL: past the last capability

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Sets(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    if libc.capset(ctypes.byref(Header(CAPABILITY_VERSION_3, 0)), (Sets * 2)()) != 0:
        raise OSError(ctypes.get_errno(), "capset: could not drop the capabilities")


def confinement_problem(folder):
    """In a confined process: None when confinement holds — `folder` writable, its parent
    read-only (and no way to remount it read-write), no network — else what does not."""
    mark = os.path.join(folder, ".evotrainer-confine-check-%s" % os.urandom(6).hex())
    open(mark, "w").close()
    os.remove(mark)
    try:
        open(os.path.join(os.path.dirname(folder), "evotrainer-probe"), "w").close()
        return "the parent folder is still writable"
    except OSError as e:
        if e.errno != errno.EROFS:
            raise
    import ctypes

    if ctypes.CDLL(None, use_errno=True).mount(None, b"/", None, ctypes.c_ulong(MS_REMOUNT | MS_BIND), None) == 0:
        return "the root could be remounted read-write"
    import socket

    try:
        socket.create_connection(("127.0.0.1", 9), timeout=2).close()
        return "a connection went through"
    except OSError as e:
        if e.errno != errno.ENETUNREACH:
            return "the network is there: %s" % e
    return None


def probe(folder, outer_namespace):
    """Exit 0 when confinement holds (see confinement_problem)."""
    confine([folder], outer_namespace)
    sys.exit(confinement_problem(folder) or 0)


if len(sys.argv) > 3 and sys.argv[1] == "--probe":
    probe(os.path.realpath(sys.argv[2]), sys.argv[3])


def run_script(config, script):
    """A harness script (a script metric) run as `python3 SCRIPT` would, confined first."""
    if config.get("writable"):
        confine(config["writable"], config.get("outer_mount_namespace"))
        problem = config.get("check") and confinement_problem(config["check"])
        if problem:
            sys.exit("the script's confinement does not hold: %s" % problem)
    import runpy

    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    sys.exit(0)


if len(sys.argv) > 3 and sys.argv[1] == "--script":
    run_script(json.loads(sys.argv[2]), sys.argv[3])

PROTO = os.fdopen(os.dup(1), "w", buffering=1 << 16, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if CONFIG.get("memory_mb"):
    cap = int(CONFIG["memory_mb"]) * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass
# Confined, and checked that it holds (as the probe checks), before any harness code loads.
CONFINED = False
if CONFIG.get("writable"):
    try:
        confine(CONFIG["writable"], CONFIG.get("outer_mount_namespace"))
        PROBLEM = confinement_problem(CONFIG["check"]) if CONFIG.get("check") else "no folder to check it on"
    except OSError as e:
        sys.exit("could not confine the backtest worker: %s" % e)
    if PROBLEM:
        sys.exit("the backtest worker's confinement does not hold: %s" % PROBLEM)
    CONFINED = True
ROOT = CONFIG.get("root") or os.getcwd()
os.chdir(ROOT)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

FUNCS = {}


class CallTimeout(Exception):
    pass


INF = float("inf")
# The call in progress: when it started, whether harness code is running, the limit.
STATE = {"since": 0.0, "in_call": False, "limit": 0.0}


def _alarm(signum, frame):
    if STATE["in_call"] and STATE["limit"] and time.monotonic() - STATE["since"] > STATE["limit"]:
        STATE["in_call"] = False
        raise CallTimeout("timed out")


signal.signal(signal.SIGALRM, _alarm)


def guard(limit):
    """One call of harness code under `limit` seconds (0: none)."""
    STATE["since"] = time.monotonic()
    STATE["limit"] = limit
    STATE["in_call"] = True
    if limit:
        signal.setitimer(signal.ITIMER_REAL, limit + 0.01)


def unguard():
    STATE["in_call"] = False
    signal.setitimer(signal.ITIMER_REAL, 0)


def send(obj):
    PROTO.write(json.dumps(obj, separators=(",", ":"), default=str, allow_nan=False) + "\n")


def flush():
    PROTO.flush()


def clean(value):
    """JSON-safe: NaN/inf become None, numpy scalars and bools become plain numbers."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if value is None or isinstance(value, str):
        return value
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return clean(item())
        except Exception:
            pass
    return str(value)


def describe(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    for frame in reversed(tb):
        if frame.filename != __file__ and not frame.filename.startswith("<"):
            where = " at %s:%d" % (os.path.relpath(frame.filename, ROOT), frame.lineno)
            break
    return "%s: %s%s" % (type(exc).__name__, str(exc)[:500], where)


def load(msg):
    path = os.path.join(ROOT, msg["path"])
    mod_dir = os.path.dirname(path)
    if mod_dir not in sys.path:
        sys.path.insert(0, mod_dir)
    spec = importlib.util.spec_from_file_location("evotrainer_harness_%s" % msg["name"], path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot import %s" % msg["path"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, msg["function"], None)
    if not callable(fn):
        raise AttributeError("%s has no function %s()" % (msg["path"], msg["function"]))
    FUNCS[msg["name"]] = (msg["kind"], fn)
    return fn


# Names through which a function can read its own locals without naming them.
FRAME_READERS = {"locals", "vars", "eval", "exec", "sys", "inspect", "_getframe", "currentframe", "f_locals"}


def reads_argument(fn, index):
    """False only when plain function `fn` provably never reads its positional parameter
    `index` (no instruction names it, no nested function captures it, no frame or locals()
    access). The host then leaves out the data only that parameter would carry."""
    if not isinstance(fn, types.FunctionType) or index >= fn.__code__.co_argcount:
        return True  # a callable object, a bound method, a partial, a *args catch-all: assume it reads
    code = fn.__code__
    name = code.co_varnames[index]
    if name in code.co_cellvars or FRAME_READERS.intersection(code.co_names):
        return True
    import dis

    for ins in dis.get_instructions(code):
        if ins.argval == name or (isinstance(ins.argval, tuple) and name in ins.argval):
            return True
    return False


def run_batch(msg):
    kind, fn = FUNCS[msg["name"]]
    items = msg["items"]
    timeout = float(msg.get("timeout") or 0)
    bid = msg["id"]
    if kind == "trl":
        # TRL calls the reward once per batch: prompts, completions and every other
        # dataset column as keyword lists. A batch that fails is retried item by item.
        results = None
        try:
            guard(timeout * max(1, len(items)))
            out = fn(
                prompts=[i.get("prompt") for i in items],
                completions=[i.get("completion") for i in items],
                **{k: [i.get("columns", {}).get(k) for i in items] for k in (items[0].get("columns", {}) if items else {})}
            )
            unguard()
            out = list(out)
            if len(out) != len(items):
                raise ValueError("returned %d scores for %d completions" % (len(out), len(items)))
            results = [[clean(v), None] for v in out]
        except BaseException as exc:  # noqa: B902 - harness code may raise anything
            unguard()
            if isinstance(exc, KeyboardInterrupt):
                raise
            if len(items) == 1:
                results = [[None, describe(exc)]]
        if results is None:
            results = []
            for it in items:
                try:
                    guard(timeout)
                    v = list(fn(prompts=[it.get("prompt")], completions=[it.get("completion")], **{k: [v] for k, v in it.get("columns", {}).items()}))
                    unguard()
                    results.append([clean(v[0]) if v else None, None if v else "returned no score"])
                except BaseException as exc:  # noqa: B902
                    unguard()
                    results.append([None, "timed out after %gs" % timeout if isinstance(exc, CallTimeout) else describe(exc)])
        send({"id": bid, "from": 0, "results": results})
        send({"id": bid, "done": True})
        flush()
        return
    # One interval timer for the whole batch (not two syscalls per item): its handler
    # raises inside the harness call once that call has run past the limit.
    start = 0
    chunk = []
    append = chunk.append
    last = time.monotonic()
    STATE["limit"] = timeout
    if timeout:
        tick = max(0.01, timeout / 4.0)
        signal.setitimer(signal.ITIMER_REAL, tick, tick)
    verl = kind == "verl"
    try:
        for i, item in enumerate(items):
            now = time.monotonic()
            STATE["since"] = now
            try:
                STATE["in_call"] = True
                if verl:
                    value = fn(item.get("data_source"), item.get("solution_str"), item.get("ground_truth"), item.get("extra_info"))
                else:
                    value = bool(fn(item))
                STATE["in_call"] = False
                append([value if type(value) is float and value == value and value not in (INF, -INF) else clean(value), None])
            except BaseException as exc:  # noqa: B902 - SystemExit from harness code is an item error
                STATE["in_call"] = False
                if isinstance(exc, KeyboardInterrupt):
                    raise
                append([None, "timed out after %gs" % timeout if isinstance(exc, CallTimeout) else describe(exc)])
            if now - last > 0.5:
                send({"id": bid, "from": start, "results": chunk})
                flush()
                start = i + 1
                chunk = []
                append = chunk.append
                last = now
    finally:
        STATE["in_call"] = False
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
    send({"id": bid, "from": start, "results": chunk})
    send({"id": bid, "done": True})
    flush()


def batch_main(in_path, out_path):
    """A shard of a cluster backtest (one Slurm array task): a header line with the
    functions to load, then one call per line; results go to `out_path` in the same order.
    Written to a temporary name and renamed, so a half-written shard is never read."""
    global PROTO
    tmp = out_path + ".part"
    with open(in_path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
        PROTO = dst
        header = json.loads(src.readline())
        for f in header["functions"]:
            try:
                load(f)
            except BaseException as exc:  # noqa: B902
                send({"load_error": f["name"], "error": describe(exc)})
                dst.flush()
                os.replace(tmp, out_path)
                return 2
        for line in src:
            if line.strip():
                run_batch(json.loads(line))
    os.replace(tmp, out_path)
    return 0


def zygote(forks):
    """Started with "forks" (one [channel, stderr] pair of inherited descriptors per worker):
    forks one worker per pair from this interpreter — started, confined and checked once —
    and returns in each of them, its requests and answers on its channel, its stderr its own.
    The parent runs no harness code: it reports each worker's exit on stdout
    ({"exited": K, "code": C, "signal": S}), kills one on request ({"op": "kill", "worker": K})
    and, once its stdin ends, kills what is left and exits."""
    global PROTO
    flush()
    alive = {}
    for k, (chan, err) in enumerate(forks):
        pid = os.fork()
        if pid == 0:
            for j, pair in enumerate(forks):
                if j != k:
                    os.close(pair[0])
                    os.close(pair[1])
            os.dup2(err, 2)
            os.dup2(err, 1)
            os.dup2(chan, 0)
            os.close(err)
            PROTO.close()
            PROTO = os.fdopen(chan, "w", buffering=1 << 16, encoding="utf-8")
            return
        alive[pid] = k
    for chan, err in forks:
        os.close(chan)
        os.close(err)
    import select

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pending = b""
    while True:
        while alive:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            k = alive.pop(pid, None)
            if k is not None:
                send({"exited": k, "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None})
        flush()
        ready, _, _ = select.select([0, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        if 0 in ready:
            data = os.read(0, 4096)
            if not data:
                for pid in alive:
                    os.kill(pid, signal.SIGKILL)
                sys.exit(0)
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                msg = json.loads(line) if line.strip() else {}
                pid = next((p for p, k in alive.items() if k == msg.get("worker")), None)
                if msg.get("op") == "kill" and pid is not None:
                    os.kill(pid, signal.SIGKILL)


def main():
    if len(sys.argv) > 2 and sys.argv[2] == "--batch":
        sys.exit(batch_main(sys.argv[3], sys.argv[4]))
    if CONFIG.get("forks"):
        zygote(CONFIG["forks"])
    send({"ready": True, "python": sys.version.split()[0], "pid": os.getpid(), "confined": CONFINED})
    flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        op = msg.get("op")
        if op == "load":
            try:
                fn = load(msg)
                # verl's extra_info (the fourth argument) is the one costly to gather: say when it goes unread.
                send({"loaded": msg["name"], "reads_extra_info": msg["kind"] != "verl" or reads_argument(fn, 3)})
            except BaseException as exc:  # noqa: B902
                send({"loaded": msg["name"], "error": describe(exc)})
            flush()
        elif op == "call":
            run_batch(msg)
        elif op == "exit":
            break


if __name__ == "__main__":
    main()

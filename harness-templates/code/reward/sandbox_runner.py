"""Runs one candidate program inside the sandbox (started by sandbox.py; never imported).

    python3 -I -S sandbox_runner.py MODE SOURCE_FILE CPU_SECONDS MEMORY_BYTES OUTPUT_BYTES DROP_TO_NOBODY

MODE is "compile" (syntax check only, exit 0 or COMPILE_ERROR_EXIT) or "run". Before the
candidate's code runs, this sets the resource limits and installs an audit hook that ends
the process with TAMPER_EXIT at the first attempt to write outside the sandbox folder, read
outside it and the Python installation, list folders elsewhere, start processes, send
signals, open sockets or load native code. A hook cannot be removed once installed, and
exiting with os._exit means the candidate cannot catch the refusal.
"""
import os
import resource
import sys

COMPILE_ERROR_EXIT = 85
TAMPER_EXIT = 86
MEMORY_EXIT = 87
TIME_EXIT = 88

DENIED_EVENTS = frozenset({
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill",
    "os.killpg", "signal.pthread_kill", "subprocess.Popen", "pty.spawn", "os.startfile",
    "socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
    "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "ctypes.dlopen",
    "ctypes.dlsym", "ctypes.cdata", "ctypes.call_function", "ctypes.addressof",
    "sys.addaudithook", "sys.setprofile", "sys.settrace", "os.chroot", "os.setuid", "os.setgid",
    "os.sched_setaffinity", "resource.setrlimit", "resource.prlimit", "sys.remote_exec", "mmap.__new__",
    "urllib.Request", "ftplib.connect", "http.client.connect", "smtplib.connect",
})
# Functions of this runner: rebinding their code or defaults (to disarm the hook) is refused.
PROTECTED = frozenset({"_sandbox_hook", "_sandbox_inside", "_sandbox_deny", "_sandbox_normpath"})
PATH_WRITE_EVENTS = frozenset({
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
    "os.link", "os.symlink", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
    "os.setxattr", "os.removexattr",
})
PATH_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk"})
DENIED_IMPORTS = frozenset({"ctypes", "_ctypes", "cffi", "_posixsubprocess", "_socket", "socket", "multiprocessing",
                            "_multiprocessing", "pty", "mmap"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
NOBODY = 65534


def _sandbox_normpath(path, cwd):
    """Pure string normalization (no module lookups the candidate could monkeypatch)."""
    if not path.startswith("/"):
        path = cwd + "/" + path
    parts = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def _sandbox_inside(path, roots, sandbox, _isinstance=isinstance, _int=int, _bytes=bytes, _str=str,
                    _fsdecode=os.fsdecode, _normpath=_sandbox_normpath):
    if _isinstance(path, _int):
        return True
    if _isinstance(path, _bytes):
        path = _fsdecode(path)
    if not _isinstance(path, _str):
        return False
    full = _normpath(path, sandbox)
    for r in roots:
        if full == r or full.startswith(r + "/"):
            return True
    return False


def _sandbox_deny(event, detail, _exit=os._exit, _write=os.write, _code=TAMPER_EXIT):
    try:
        _write(2, ("\nsandbox: refused %s %s\n" % (event, detail))[:500].encode("utf-8", "replace"))
    finally:
        _exit(_code)


def make_hook(sandbox, readable):
    """The audit hook. It has no closure and everything it uses is bound as a default when it
    is created, so monkeypatching modules, builtins or globals afterwards changes nothing it
    relies on; rebinding its defaults or code is itself refused."""

    def _sandbox_hook(event, args, sandbox=sandbox, readable=readable, sandbox_only=(sandbox,), inside=_sandbox_inside,
                      deny=_sandbox_deny, _isinstance=isinstance, _str=str, _bytes=bytes, _int=int, _tuple=tuple,
                      _repr=repr, _any=any, _getattr=getattr, _denied=DENIED_EVENTS, _pw=PATH_WRITE_EVENTS,
                      _pr=PATH_READ_EVENTS, _imports=DENIED_IMPORTS, _wf=WRITE_FLAGS, _protected=PROTECTED):
        if event == "open":
            a = _tuple(args) + (None, None, None)
            path, mode_, flags = a[0], a[1], a[2]
            writing = (_isinstance(mode_, _str) and _any(c in mode_ for c in "wax+")) or (_isinstance(flags, _int) and flags & _wf)
            if writing and not inside(path, sandbox_only, sandbox):
                deny(event, _repr(path))
            if not writing and not inside(path, readable, sandbox):
                deny(event, _repr(path))
        elif event in ("object.__setattr__", "object.__delattr__"):
            if args and _getattr(args[0], "__name__", None) in _protected:
                deny(event, _repr(args[1:2]))
        elif event in _denied or event.startswith(("os.exec", "os.spawn", "os.posix_spawn", "socket.", "ctypes.")):
            deny(event, "")
        elif event in _pw:
            for x in args:
                if _isinstance(x, (_str, _bytes)) and not inside(x, sandbox_only, sandbox):
                    deny(event, _repr(x))
        elif event in _pr:
            for x in args[:1]:
                if _isinstance(x, (_str, _bytes)) and not inside(x, readable, sandbox):
                    deny(event, _repr(x))
        elif event == "import":
            name = args[0] if args else ""
            if _isinstance(name, _str) and name.split(".")[0] in _imports:
                deny(event, name)

    return _sandbox_hook


def main():
    mode, source_file, cpu_s, mem_b, out_b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    drop = len(sys.argv) > 6 and sys.argv[6] == "1"
    sandbox = os.path.realpath(os.getcwd())
    with open(source_file, "rb") as f:
        source = f.read()
    try:
        code = compile(source, "solution.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as e:
        os.write(2, ("compile error: %s: %s\n" % (type(e).__name__, e)).encode("utf-8", "replace"))
        os._exit(COMPILE_ERROR_EXIT)
    if mode == "compile":
        os._exit(0)
    os.remove(source_file)  # the candidate has no business reading its own file back

    readable = [sandbox]
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        readable.append(os.path.realpath(os.path.join(p, "lib")))
        readable.append(os.path.realpath(os.path.join(p, "lib64")))
    readable += [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
    readable += ["/dev/null", "/dev/urandom", "/dev/zero", "/etc/localtime", "/usr/share/zoneinfo"]
    readable = tuple(sorted({r.rstrip("/") or "/" for r in readable}))
    hook = make_hook(sandbox, readable)

    # Run as nobody when started as root (and nobody can run this Python): the kernel then
    # refuses writes to the harness and signals to other users' processes, whatever the hook does.
    if drop and os.getuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    import signal

    # Over the CPU limit the kernel sends SIGXCPU (the hard limit then kills); as the first
    # process of its own PID namespace the runner only receives signals it handles.
    signal.signal(signal.SIGXCPU, lambda *_: os._exit(TIME_EXIT))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (mem_b, mem_b))
    resource.setrlimit(resource.RLIMIT_FSIZE, (out_b, out_b))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for m in list(sys.modules):  # modules the hook refuses must not be reachable already imported
        if m.split(".")[0] in DENIED_IMPORTS:
            del sys.modules[m]
    import types

    module = types.ModuleType("__main__")
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module  # the candidate's __main__, not this runner
    scope = module.__dict__
    sys.argv = ["solution.py"]
    sys.addaudithook(hook)
    status = 0
    try:
        exec(code, scope)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            os.write(2, str(e.code).encode("utf-8", "replace")[:1000] + b"\n")
    except MemoryError:
        os.write(2, b"MemoryError\n")
        os._exit(MEMORY_EXIT)
    except BaseException as e:  # the candidate's own error: a runtime error
        try:
            os.write(2, ("%s: %s\n" % (type(e).__name__, e))[-4000:].encode("utf-8", "replace"))
        except BaseException:
            pass
        os._exit(1)
    try:
        sys.stdout.flush()
    except MemoryError:
        os._exit(MEMORY_EXIT)
    except BaseException:
        os._exit(1)
    os._exit(status & 0xFF)


if __name__ == "__main__":
    main()

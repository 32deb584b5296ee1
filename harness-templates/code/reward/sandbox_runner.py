"""Runs one candidate program inside the sandbox (started by sandbox.py; never imported).

    python3 -I -S sandbox_runner.py MODE SOURCE_FILE CPU_SECONDS MEMORY_BYTES OUTPUT_BYTES DROP_TO_NOBODY [OUTER_MOUNT_NS]
    python3 -I -S sandbox_runner.py probe FOLDER OUTER_MOUNT_NS

MODE is "compile" (syntax check only, exit 0 or COMPILE_ERROR_EXIT) or "run". Before the
candidate's code runs, this
  * given OUTER_MOUNT_NS (the checker's /proc/self/ns/mnt; started in a private mount
    namespace, never in that one), remounts every mount read-only and binds the sandbox
    folder back read-write: the kernel refuses any write
    elsewhere, whatever path, working folder or directory descriptor the candidate uses;
  * sets the resource limits and installs an audit hook that ends the process with
    TAMPER_EXIT at the first attempt to write outside the sandbox folder; read, list, stat
    or read links outside it and the Python installation; change folder out of it; open a
    folder as a descriptor (for dir_fd= calls); make symlinks; start processes, send
    signals, open sockets or load native code. Relative paths are resolved against the
    real working folder, as the kernel resolves them.
A hook cannot be removed once installed, and exiting with os._exit means the candidate
cannot catch the refusal. "probe" checks that the read-only root can be set up here.
"""
import os
import posix
import resource
import sys

COMPILE_ERROR_EXIT = 85
TAMPER_EXIT = 86
MEMORY_EXIT = 87
SETUP_EXIT = 89

DENIED_EVENTS = frozenset({
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "os.symlink",
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
PROTECTED = frozenset({"_sandbox_hook", "_sandbox_inside", "_sandbox_deny", "_sandbox_normpath", "_sandbox_isdir", "guarded",
                       "finish"})
PATH_WRITE_EVENTS = frozenset({
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
    "os.link", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
    "os.setxattr", "os.removexattr",
})
PATH_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.walk", "os.stat", "os.readlink",
                              "os.getxattr", "os.listxattr"})
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


def _sandbox_inside(path, roots, cwd, _isinstance=isinstance, _int=int, _bytes=bytes, _str=str,
                    _fsdecode=os.fsdecode, _normpath=_sandbox_normpath):
    """Is `path` (relative to `cwd`, the real working folder) in one of `roots`?
    A descriptor (an int) names something already opened, checked when it was opened."""
    if _isinstance(path, _int):
        return True
    if _isinstance(path, _bytes):
        path = _fsdecode(path)
    if not _isinstance(path, _str) or not _isinstance(cwd, _str):
        return False
    full = _normpath(path, cwd)
    for r in roots:
        if full == r or full.startswith(r + "/"):
            return True
    return False


def _sandbox_isdir(path, _stat=posix.stat):
    """A folder? With the interpreter's own stat (not the audited wrapper the candidate sees)."""
    try:
        return _stat(path).st_mode & 0o170000 == 0o040000
    except BaseException:
        return False


def _sandbox_deny(event, detail, _exit=os._exit, _write=os.write, _code=TAMPER_EXIT):
    try:
        _write(2, ("\nsandbox: refused %s %s\n" % (event, detail))[:500].encode("utf-8", "replace"))
    finally:
        _exit(_code)


def make_hook(sandbox, readable):
    """See _make_hook; native modules load only from the interpreter's library and site folders."""
    native = tuple(r for r in readable if r != sandbox and not sandbox.startswith(r + "/") and not r.startswith("/dev/"))
    return _make_hook(sandbox, readable, native)


def _make_hook(sandbox, readable, native):
    """The audit hook. It has no closure and everything it uses is bound as a default when it
    is created, so monkeypatching modules, builtins or globals afterwards changes nothing it
    relies on; rebinding its defaults or code is itself refused. Relative paths are resolved
    against the real working folder (os.getcwd, as the kernel does), never an assumed one."""

    def _sandbox_hook(event, args, sandbox=sandbox, readable=readable, native=native, sandbox_only=(sandbox,), inside=_sandbox_inside,
                      deny=_sandbox_deny, _isinstance=isinstance, _str=str, _bytes=bytes, _int=int, _tuple=tuple,
                      _repr=repr, _any=any, _getattr=getattr, _denied=DENIED_EVENTS, _pw=PATH_WRITE_EVENTS,
                      _pr=PATH_READ_EVENTS, _imports=DENIED_IMPORTS, _wf=WRITE_FLAGS, _protected=PROTECTED,
                      _getcwd=os.getcwd, _isdir=_sandbox_isdir):
        try:
            cwd = _getcwd()
        except BaseException:
            cwd = None  # a working folder that is gone: every relative path is refused
        if event == "open":
            a = _tuple(args) + (None, None, None)
            path, mode_, flags = a[0], a[1], a[2]
            writing = (_isinstance(mode_, _str) and _any(c in mode_ for c in "wax+")) or (_isinstance(flags, _int) and flags & _wf)
            if writing and not inside(path, sandbox_only, cwd):
                deny(event, _repr(path))
            if not writing and not inside(path, readable, cwd):
                deny(event, _repr(path))
            # a folder opened as a descriptor would let dir_fd-relative calls (open, mkdir,
            # rename, ... with dir_fd=) act on paths the hook cannot see resolved
            if _isinstance(path, (_str, _bytes)) and _isdir(path):
                deny(event, "folder " + _repr(path))
        elif event == "os.chdir":
            # only within the sandbox, and never to a descriptor (os.fchdir)
            if not args or _isinstance(args[0], _int) or not inside(args[0], sandbox_only, cwd):
                deny(event, _repr(args[:1]))
        elif event in ("object.__setattr__", "object.__delattr__"):
            if args and _getattr(args[0], "__name__", None) in _protected:
                deny(event, _repr(args[1:2]))
        elif event in _denied or event.startswith(("os.exec", "os.spawn", "os.posix_spawn", "socket.", "ctypes.")):
            deny(event, "")
        elif event in _pw:
            for x in args:
                if _isinstance(x, (_str, _bytes)) and not inside(x, sandbox_only, cwd):
                    deny(event, _repr(x))
        elif event in _pr:
            for x in args[:1]:
                if _isinstance(x, (_str, _bytes)) and not inside(x, readable, cwd):
                    deny(event, _repr(x))
        elif event == "import":
            name = args[0] if args else ""
            if _isinstance(name, _str) and name.split(".")[0] in _imports:
                deny(event, name)
            # an extension module (its file named): only the interpreter's own, never one the
            # candidate wrote or copied
            if len(args) > 1 and _isinstance(args[1], (_str, _bytes)) and not inside(args[1], native, cwd):
                deny(event, _repr(args[1]))

    return _sandbox_hook


def _sandbox_guarded(event, fn, _audit=sys.audit):
    """`fn` (os.stat, os.readlink, ...: calls the interpreter does not audit) raising an audit
    event first, so the hook sees its path. Code that digs the original out of the wrapper's
    defaults still gets at file metadata only: writes are refused by the hook and, with the
    read-only root, by the kernel."""

    def guarded(path, *args, _fn=fn, _event=event, _audit=_audit, **kwargs):
        _audit(_event, path)
        return _fn(path, *args, **kwargs)

    return guarded


def audit_unaudited_calls():
    """os/posix stat, lstat and readlink raise os.stat / os.readlink events from now on."""
    for name, event in (("stat", "os.stat"), ("lstat", "os.stat"), ("readlink", "os.readlink")):
        g = _sandbox_guarded(event, getattr(posix, name))
        setattr(posix, name, g)
        setattr(os, name, g)


MOUNT_FLAGS = {"ro": 1, "nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
               "relatime": 1 << 21, "strictatime": 1 << 24}
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18


def _unescape_mount_point(field):
    """/proc/self/mountinfo writes space, tab, newline and backslash as octal escapes."""
    out, i = bytearray(), 0
    raw = os.fsencode(field)
    while i < len(raw):
        if raw[i:i + 1] == b"\\" and raw[i + 1:i + 4].isdigit():
            out.append(int(raw[i + 1:i + 4], 8))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def read_only_root(writable, outer_namespace):
    """In a private mount namespace: every mount read-only (its other flags kept), then
    `writable` bound back read-write. Raises OSError saying which mount could not be set.
    Refuses to touch the mount namespace it was started from (`outer_namespace`)."""
    if not outer_namespace or os.readlink("/proc/self/ns/mnt") == outer_namespace:
        raise OSError(1, "not in a mount namespace of its own (start it under unshare --mount)")
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def mount(src, target, fstype, flags):
        if libc.mount(src, target, fstype, ctypes.c_ulong(flags), None) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "mount %s: %s" % (target.decode("utf-8", "replace"), os.strerror(e)))

    mount(None, b"/", None, MS_REC | MS_PRIVATE)
    w = os.fsencode(writable)
    mount(w, w, None, MS_BIND)  # its own mount, left read-write below
    try:  # nothing written there can be mapped executable (a native module the candidate writes)
        mount(None, w, None, MS_REMOUNT | MS_BIND | MOUNT_FLAGS["nosuid"] | MOUNT_FLAGS["nodev"] | MOUNT_FLAGS["noexec"])
    except OSError:
        pass  # the audit hook still refuses loading native code from there
    with open("/proc/self/mountinfo", "rb") as f:
        lines = f.read().decode("utf-8", "surrogateescape").splitlines()
    seen = {w}
    for line in lines:
        fields = line.split(" ")
        target, options = _unescape_mount_point(fields[4]), fields[5].split(",")
        if target in seen:
            continue
        seen.add(target)
        flags = MS_REMOUNT | MS_BIND | MOUNT_FLAGS["ro"]
        for o in options:
            flags |= MOUNT_FLAGS.get(o, 0) if o != "rw" else 0
        try:
            mount(None, target, None, flags)
        except OSError as e:
            if e.errno not in (2, 13):  # a mount point hidden under another mount: not reachable
                raise
    os.chdir(writable)  # onto the read-write mount (the working folder was the one beneath)


def drop_capabilities():
    """No capabilities left, none to regain through setuid programs: a candidate still root in
    its namespaces cannot remount the root read-write or mount anything."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    cap = 0
    while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP, until EINVAL past the last one
        cap += 1
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    if libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:
        raise OSError(ctypes.get_errno(), "capset: could not drop the capabilities")


def probe(folder, outer_namespace):
    """Exit 0 when the read-only root holds here: `folder` writable, its parent not, and no
    way to remount it read-write."""
    read_only_root(folder, outer_namespace)
    drop_capabilities()
    with open(os.path.join(folder, "probe"), "w") as f:
        f.write("x")
    import ctypes

    if ctypes.CDLL(None).mount(None, b"/", None, ctypes.c_ulong(MS_REMOUNT | MS_BIND), None) == 0:
        os._exit(5)
    try:
        open(os.path.join(os.path.dirname(folder), "evotrainer-probe"), "w").close()
    except OSError as e:
        os._exit(0 if e.errno == 30 else 3)  # EROFS
    os._exit(4)


def main():
    if sys.argv[1] == "probe":
        probe(os.path.realpath(sys.argv[2]), sys.argv[3])
    mode, source_file, cpu_s, mem_b, out_b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    drop = len(sys.argv) > 6 and sys.argv[6] == "1"
    outer_namespace = sys.argv[7] if len(sys.argv) > 7 else ""
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

    if mode == "run" and (outer_namespace or (drop and os.getuid() == 0)):
        setup(sandbox, outer_namespace, drop)
        # The setup loaded native-code support (ctypes) into this interpreter, where a module
        # cache would hand it to the candidate without an import to refuse: the candidate runs
        # in a fresh interpreter instead (the mounts, user and dropped capabilities carry over).
        os.execv(sys.executable, [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), "candidate", source_file,
                                  str(cpu_s), str(mem_b), str(out_b)])
    os.remove(source_file)  # the candidate has no business reading its own file back

    readable = [sandbox]
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        readable.append(os.path.realpath(os.path.join(p, "lib")))
        readable.append(os.path.realpath(os.path.join(p, "lib64")))
    readable += [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
    readable += ["/dev/null", "/dev/urandom", "/dev/zero", "/etc/localtime", "/usr/share/zoneinfo"]
    readable = tuple(sorted({r.rstrip("/") or "/" for r in readable}))
    hook = make_hook(sandbox, readable)

    # Over the CPU limit the kernel sends SIGKILL (soft = hard: no SIGXCPU first that the
    # program could ignore or turn into an exit of its own choosing).
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
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
    audit_unaudited_calls()
    sys.addaudithook(hook)
    del hook
    finish(code, scope)


def setup(sandbox, outer_namespace, drop):
    """The read-only root (in a private mount namespace), then nobody (started as root), then no
    capabilities left."""
    if outer_namespace:
        try:
            read_only_root(sandbox, outer_namespace)
        except OSError as e:
            os.write(2, ("sandbox setup: %s\n" % e).encode("utf-8", "replace"))
            os._exit(SETUP_EXIT)
    # Run as nobody when started as root (and nobody can run this Python): the kernel then
    # refuses writes to the harness and signals to other users' processes, whatever the hook does.
    if drop and os.getuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    if outer_namespace and os.getuid() == 0:
        try:
            drop_capabilities()
        except OSError as e:
            os.write(2, ("sandbox setup: %s\n" % e).encode("utf-8", "replace"))
            os._exit(SETUP_EXIT)


def finish(code, scope, _exit=os._exit, _write=os.write, _isinstance=isinstance, _int=int, _str=str, _type=type,
           _SystemExit=SystemExit, _MemoryError=MemoryError, _BaseException=BaseException, _stdout=sys.stdout):
    """Runs the candidate and exits with its status. What the exit path uses is bound here, before
    the candidate runs: replacing os._exit, os.write, builtins or sys.stdout changes no verdict."""
    status = 0
    try:
        exec(code, scope)
    except _SystemExit as e:
        status = e.code if _isinstance(e.code, _int) else (0 if e.code is None else 1)
        if not _isinstance(e.code, _int) and e.code is not None:
            try:
                _write(2, _str(e.code).encode("utf-8", "replace")[:1000] + b"\n")
            except _BaseException:
                pass
    except _MemoryError:
        _write(2, b"MemoryError\n")
        _exit(MEMORY_EXIT)
    except _BaseException as e:  # the candidate's own error: a runtime error
        try:
            _write(2, ("%s: %s\n" % (_type(e).__name__, e))[-4000:].encode("utf-8", "replace"))
        except _BaseException:
            pass
        _exit(1)
    try:
        _stdout.flush()
    except _MemoryError:
        _exit(MEMORY_EXIT)
    except _BaseException:
        _exit(1)
    _exit(_int(status) & 0xFF)


if __name__ == "__main__":
    main()

"""Confine the new worker process, before any student code runs (child side).

Called in the fresh child (forked by the fork server, or in a spawned
worker's preexec_fn): it joins its control groups, takes a session and process
group of its own, sets its rlimits (RLIMIT_CPU soft per call, hard per
submission; RLIMIT_DATA, not RLIMIT_AS: torch reserves ~640 MB of address
space at import; RLIMIT_FSIZE on printed output; RLIMIT_NPROC; no core
dumps), sets no_new_privs (no exec gains a privilege), and, when the judge
runs as root, enters its own network namespace (no route anywhere, only a
loopback that is down) and its own mount namespace whose root is the
`view.View` the judge computed, then drops to an unprivileged uid. Standard
library only.

It fails closed: every step is checked (each libc call's return code, read
with `use_errno`, and where cheap what the step should have left: the mounts
are no longer shared, the new network namespace holds only `lo`, the uids and
gids are the worker's, the rlimits are set, the process is in its control
groups). The first step that fails ends the process with `CONFINE_FAILED`
before any student code runs, and the step is named in the scratch
directory's `confine` file ("unshare(CLONE_NEWNET) failed: EPERM (...)"),
which the judge reads back (`failure`) and reports as the grading machine's
fault. A worker that got through writes "ok" there first, so an exit status
of CONFINE_FAILED from student code is the student's own.

One degraded mode is deliberate (docs/pages/architecture/index.md, "Without a mount namespace"): a root
judge that the kernel refuses a mount namespace with EPERM (a container
without CAP_SYS_ADMIN) changes modes on the host instead
(`restrict_by_mode`), and there a network namespace refused with EPERM too is
left as it is; every other step still fails closed.
"""

import ctypes
import errno as errno_mod
import os
import resource
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NoReturn

from autograder.sandbox.cgroup import WorkerGroup
from autograder.sandbox.limits import Limits
from autograder.sandbox.pdeath import die_with_parent
from autograder.sandbox.view import PRIVATE_DIRS, View

CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
CONFINE_FAILED = 72  # exit status of a worker whose confinement failed (it never ran student code)
# The exit status a failed view had before every step was named; confine no longer exits with it
# (client.py still reads it, before any cell ran, until its branch goes).
VIEW_FAILED = 71
REPORT = "confine"  # in the scratch directory: "ok", or the step that failed
PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS = 38, 39
LINUX = sys.platform.startswith("linux")  # prctl's steps (no_new_privs, the parent-death signal) are Linux's
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 0x4000, 1 << 18


class StepFailed(Exception):
    """A confinement step failed: `step` names it, `err` is its errno (or None)."""

    def __init__(self, step: str, err: int | None = None, detail: str | None = None) -> None:
        super().__init__(step, err, detail)
        self.step, self.err, self.detail = step, err, detail

    def line(self) -> str:
        why = self.detail or ""
        if self.err:
            name = errno_mod.errorcode.get(self.err, f"errno {self.err}")
            why = f"{name} ({os.strerror(self.err)})" + (f", {self.detail}" if self.detail else "")
        return f"{self.step} failed: {why}" if why else f"{self.step} failed"


class NoMountNamespace(StepFailed):
    """The kernel refuses this process a mount namespace (EPERM: no CAP_SYS_ADMIN)."""


class _Step:
    """`with _Step("setsid"): ...`: an OSError or ValueError inside becomes StepFailed naming it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> "_Step":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Literal[False]:
        if exc is None or isinstance(exc, StepFailed):
            return False
        if isinstance(exc, OSError):
            raise StepFailed(self.name, exc.errno, None if exc.errno else str(exc)[:200]) from None
        if isinstance(exc, (ValueError, TypeError)):
            raise StepFailed(self.name, None, f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return False


def check(step: str, rc: int) -> None:
    """A libc call's return code (its errno read through ctypes' use_errno): StepFailed unless 0."""
    if rc != 0:
        err = ctypes.get_errno()
        raise StepFailed(step, err or None, None if err else f"returned {rc}")


def verify(step: str, ok: object, detail: str | None) -> None:
    """What a step should have left: StepFailed naming it unless `ok`."""
    if not ok:
        raise StepFailed(step, None, detail)


def open_report(scratch: str | None) -> int | None:
    """The descriptor the first failed step is written to (None without a scratch directory).
    Opened as root before any step, so it is written through even after the uid drop;
    the worker's uid can open neither it nor its folder."""
    if not scratch:
        return None
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW
    return os.open(os.path.join(scratch, REPORT), flags, 0o600)


def fail_closed(report: int | None, steps: Callable[[], object]) -> None:
    """Run `steps()`; if one fails, write it to `report` and end this process
    (exit status CONFINE_FAILED) before anything else runs. Once they all
    passed, "ok" is written and the descriptor closed (student code never holds it)."""
    try:
        steps()
    except StepFailed as exc:
        _end(report, exc.line())
    except BaseException as exc:  # noqa: BLE001 - any error here: never run student code half-confined
        _end(report, f"confinement failed: {type(exc).__name__}: {str(exc)[:200]}")
    if report is not None:
        try:
            os.write(report, b"ok\n")
            os.close(report)
        except OSError:
            _end(None, "")


def _end(report: int | None, line: str) -> NoReturn:
    if report is not None:
        try:
            os.write(report, line.encode("utf-8", "replace")[:1000] + b"\n")
        except OSError:
            pass
    os._exit(CONFINE_FAILED)


def failure(scratch: str | Path) -> str | None:
    """The judge's side: the step a worker's confinement failed at (one line), or
    None where it got through ("ok") and so ran the student's code."""
    try:
        with open(os.path.join(scratch, REPORT), "rb") as f:
            text = f.read(1000).decode("utf-8", "replace").strip()
    except OSError:
        return "no report of the failed step"
    if text.startswith("ok"):
        return None
    return text.splitlines()[0][:300] if text else "no report of the failed step"


def apply_limits(
    limits: Limits, uid: int | None, view: View | None, cgroups: Sequence[str] = (), scratch: str | None = None
) -> None:
    """In the new worker process: its control groups, its own session and
    process group, rlimits, no_new_privs, and (root only) the private
    namespaces, its view of the file system and the unprivileged uid. Returns
    only once every step passed; otherwise the process ends (`fail_closed`)."""
    try:
        report = open_report(scratch)
    except OSError:
        os._exit(CONFINE_FAILED)  # `failure` reads the missing report as such
    fail_closed(report, lambda: _confine(limits, uid, view, cgroups, scratch))


def _confine(limits: Limits, uid: int | None, view: View | None, cgroups: Sequence[str], scratch: str | None) -> None:
    parent = os.getppid()
    join_groups(cgroups)
    with _Step("setsid"):
        os.setsid()
    with _Step("oom_score_adj"):  # when a box runs out of memory, the kernel kills a worker, never the judge
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    mb = 1 << 20
    set_limit("RLIMIT_CORE", 0, 0)
    set_limit("RLIMIT_DATA", limits.memory_mb * mb, limits.memory_mb * mb)
    set_limit("RLIMIT_FSIZE", limits.output_bytes, limits.output_bytes)
    set_limit("RLIMIT_CPU", int(limits.load_seconds) + 1, int(limits.submission_cpu_seconds))
    no_new_privs()
    if uid is not None:
        assert view is not None  # computed wherever a uid is (an error here fails closed, as before)
        try:
            # scratch=None: fine where the namespace is refused (its first step); else a TypeError, which fails closed
            enter_view(view, scratch, uid, limits.disk_mb)  # type: ignore[arg-type]
            namespaces = True
        except NoMountNamespace:  # the documented fallback (no CAP_SYS_ADMIN)
            namespaces = False
            restrict_by_mode(view)
            if scratch:
                with _Step("chdir to the working directory"):
                    os.chdir(Path(scratch) / "work")
        try:
            enter_network_namespace()
        except StepFailed as exc:
            if namespaces or exc.err != errno_mod.EPERM:
                raise
        drop_to(uid)
    # After the uid change (which clears it): the worker dies with the fork server or judge that made it.
    with _Step("prctl(PR_SET_PDEATHSIG)"):
        verify("prctl(PR_SET_PDEATHSIG)", die_with_parent(parent) or not LINUX, "not armed")
    set_limit("RLIMIT_NPROC", limits.processes, limits.processes)


# -- the steps ---------------------------------------------------------------
def _libc() -> Any:  # ctypes.CDLL: its functions are looked up by name
    return ctypes.CDLL(None, use_errno=True)


def join_groups(paths: Sequence[str]) -> None:
    """Into each control group the judge made for this worker, and checked there."""
    with _Step("joining the worker's control group"):
        WorkerGroup.join(paths)
        me = str(os.getpid())
        for p in paths:
            with open(os.path.join(p, "cgroup.procs")) as f:
                verify(f"joining the control group {p}", me in f.read().split(), "this process is not in it")


class _Rlimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]  # Linux's struct rlimit (rlim_t)


def set_limit(name: str, soft: int, hard: int) -> None:
    """setrlimit, through libc on Linux so that a refusal keeps its errno (EINVAL, EPERM)."""
    step = f"setrlimit({name})"
    which = getattr(resource, name)
    with _Step(step):
        if LINUX:
            check(step, _libc().setrlimit(which, ctypes.byref(_Rlimit(int(soft), int(hard)))))
        else:
            resource.setrlimit(which, (soft, hard))
        verify(step, resource.getrlimit(which) == (soft, hard), f"it reads {resource.getrlimit(which)}")


def no_new_privs() -> None:
    """No exec of this process or its children gains a privilege (setuid files, file capabilities)."""
    if not LINUX:
        return
    prctl = _libc().prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    check("prctl(PR_SET_NO_NEW_PRIVS)", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    verify("prctl(PR_SET_NO_NEW_PRIVS)", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1, "not set")


def enter_network_namespace() -> None:
    """A network namespace of its own: no interface but `lo` (down), no route anywhere."""
    check("unshare(CLONE_NEWNET)", _libc().unshare(CLONE_NEWNET))
    with _Step("reading the new network namespace's interfaces"):
        names = interfaces()
    verify("unshare(CLONE_NEWNET)", names == ["lo"], f"the new namespace has interfaces {names}")


def interfaces() -> list[str]:
    """The network interfaces this process's network namespace holds (/proc/self/net/dev)."""
    with open("/proc/self/net/dev") as f:
        lines = f.read().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines if ":" in line)


def drop_to(uid: int) -> None:
    with _Step("setgroups"):
        os.setgroups([])
    with _Step("setgid"):
        os.setgid(uid)
    with _Step("setuid"):
        os.setuid(uid)
    with _Step("the uid drop"):
        verify(
            "the uid drop",
            os.getresuid() == (uid, uid, uid) and os.getresgid() == (uid, uid, uid) and os.getgroups() == [],
            f"uids {os.getresuid()}, gids {os.getresgid()}, groups {os.getgroups()}",
        )


def _mount(
    libc: Any,
    src: bytes | None,
    dst: str | Path,
    fstype: bytes | None,
    flags: int,
    data: bytes | None = None,
    what: str | None = None,
) -> None:
    step = what or f"mount {(fstype or src or b'').decode()} on {dst}"
    check(step, libc.mount(src, str(dst).encode(), fstype, flags, data))


def _inside(root: str | Path, path: str | Path) -> Path:
    return Path(root) / Path(path).relative_to("/")


def _no_shared_mounts() -> bool:
    """Whether no mount of this namespace propagates to or from another (/proc/self/mountinfo)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            optional = line.split(" - ", 1)[0].split()[6:]
            if any(o.startswith("shared:") for o in optional):
                return False
    return True


def enter_view(view: View, scratch: str | Path, uid: int, disk_mb: int) -> None:
    """A private mount namespace whose root holds only what `view` lists
    (read-only binds at the same paths, copies of the kit emptied, the worker
    side put back) plus private tmpfs PRIVATE_DIRS and the working directory
    (`scratch`/work, a tmpfs of `disk_mb` owned by `uid`); then chroot into it.
    Raises NoMountNamespace where the kernel refuses a mount namespace (EPERM),
    StepFailed naming the step that failed otherwise."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        err = ctypes.get_errno()
        error = NoMountNamespace if err == errno_mod.EPERM else StepFailed
        raise error("unshare(CLONE_NEWNS)", err)
    _mount(libc, b"none", "/", None, MS_REC | MS_PRIVATE, what="making / private (mount propagation)")
    with _Step("reading /proc/self/mountinfo"):
        verify("making / private (mount propagation)", _no_shared_mounts(), "a mount is still shared")
    root = Path(scratch) / "root"
    with _Step(f"mkdir {root}"):
        root.mkdir(mode=0o755, exist_ok=True)
    _mount(libc, b"tmpfs", root, b"tmpfs", 0, b"mode=755,size=1m")
    # Parents before children: /dev before /dev/shm, /tmp before a venv under /tmp.
    plan = [(p, "bind") for p in view.binds] + [(p, "tmpfs") for p in PRIVATE_DIRS]
    bound: list[str] = []
    for path, kind in sorted(plan, key=lambda item: Path(item[0]).parts):
        if kind == "bind" and any(b == path or Path(b) in Path(path).parents for b in bound):
            continue  # already reachable through a bind above it
        target = _inside(root, path)
        if kind == "tmpfs":
            if not os.path.isdir(path) or os.path.islink(path):
                continue
            with _Step(f"mkdir {target}"):
                target.mkdir(parents=True, exist_ok=True)
            _mount(libc, b"tmpfs", target, b"tmpfs", 0, f"mode=1777,size={disk_mb}m".encode())
            continue
        if os.path.islink(path):  # merged /usr: /lib -> usr/lib
            with _Step(f"symlink {target}"):
                target.parent.mkdir(parents=True, exist_ok=True)
                if not os.path.lexists(target):
                    os.symlink(os.readlink(path), target)
            continue
        _bind(libc, path, target)
        bound.append(path)
    for path in view.masks:
        target = _inside(root, path)
        if target.is_dir() and not target.is_symlink():
            _mount(libc, b"tmpfs", target, b"tmpfs", 0, b"mode=755,size=64k")
    for path in view.worker_side:
        _bind(libc, path, _inside(root, path))
    work = Path(scratch) / "work"
    inner_work = _inside(root, work)
    with _Step(f"mkdir {inner_work}"):
        inner_work.mkdir(parents=True, exist_ok=True)
        os.chmod(inner_work.parent, 0o711)
    _mount(libc, b"tmpfs", inner_work, b"tmpfs", 0, f"mode=700,size={disk_mb}m,uid={uid},gid={uid}".encode())
    progress = Path(scratch) / "progress"
    if progress.exists():
        _bind(libc, progress, _inside(root, progress), read_only=False)
    with _Step("chroot into the view"):
        os.chroot(root)
    with _Step("chdir to the working directory"):
        os.chdir(work)


def _bind(libc: Any, path: str | Path, target: Path, read_only: bool = True) -> None:
    with _Step(f"mkdir {target}"):
        if os.path.isdir(path):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.touch()
    _mount(libc, str(path).encode(), target, None, MS_BIND | MS_REC, what=f"bind {path} on {target}")
    if read_only:  # defence in depth: the worker's uid cannot write there anyway
        _mount(libc, None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY, what=f"remount {target} read-only")


def restrict_by_mode(view: View) -> None:
    """Fallback where no mount namespace can be made (a container without
    CAP_SYS_ADMIN): the private root, the course's own folders and every copy
    of the kit's private part that the judge found become root-only (0700),
    and directories that block the way to the interpreter or the worker side
    get o+x (traverse, not list). What it cannot hide: any other
    world-readable copy (docs/pages/architecture/index.md says so). A path that is not there is
    skipped; any other failure is StepFailed (never half-hidden)."""
    for p in view.fallback_hide:
        with _Step(f"chmod 0700 {p}"):
            try:
                os.chmod(p, 0o700)
            except FileNotFoundError:
                pass
    for path in view.reach:
        parts = Path(path).parts
        for i in range(2, len(parts)):
            parent = Path(*parts[:i])
            with _Step(f"chmod o+x {parent}"):
                mode = os.stat(parent).st_mode
                if not mode & 0o001:
                    os.chmod(parent, (mode & 0o7777) | 0o001)

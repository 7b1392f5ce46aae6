"""Confine the new worker process, before any student code runs (child side).

Called in the fresh child (forked by the fork server, or in a spawned
worker's preexec_fn): it joins its control groups, takes a session and process
group of its own, sets its rlimits (RLIMIT_CPU soft per call, hard per
submission; RLIMIT_DATA, not RLIMIT_AS: torch reserves ~640 MB of address
space at import; RLIMIT_FSIZE on printed output; RLIMIT_NPROC; no core
dumps), and, when the judge runs as root, enters its own network namespace (no
route anywhere) and its own mount namespace whose root is the `view.View`
the judge computed, then drops to an unprivileged uid. Standard library only.
"""
import ctypes
import os
import resource
from pathlib import Path

from autograder.sandbox.cgroup import WorkerGroup
from autograder.sandbox.pdeath import die_with_parent
from autograder.sandbox.view import PRIVATE_DIRS

CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
VIEW_FAILED = 71  # exit status of a worker whose view could not be built (it never runs student code)


class NoMountNamespace(OSError):
    """The kernel gives this process no mount namespace (no CAP_SYS_ADMIN)."""
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 0x4000, 1 << 18


def apply_limits(limits, uid, view, cgroups=(), scratch=None):
    """In the new worker process: its control groups, its own session and
    process group, rlimits, and (root only) the private namespaces, its view
    of the file system and the unprivileged uid."""
    parent = os.getppid()
    WorkerGroup.join(cgroups)
    os.setsid()
    try:  # when a box runs out of memory, the kernel kills a worker, never the judge
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass
    mb = 1 << 20
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_mb * mb, limits.memory_mb * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_bytes, limits.output_bytes))
    cpu = int(limits.load_seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, int(limits.submission_cpu_seconds)))
    if uid is not None:
        try:
            enter_view(view, scratch, uid, limits.disk_mb)
        except NoMountNamespace:
            restrict_by_mode(view)
            if scratch:
                os.chdir(Path(scratch) / "work")
        except OSError:
            # A namespace, but the view could not be built: never run student
            # code half-confined. The judge names this exit status.
            os._exit(VIEW_FAILED)
        _libc().unshare(CLONE_NEWNET)  # no route anywhere; left as is where it fails
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    # After the uid change (which clears it): the worker dies with the fork server or judge that made it.
    die_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _mount(libc, src, dst, fstype, flags, data=None):
    if libc.mount(src, str(dst).encode(), fstype, flags, data) != 0:
        raise OSError(ctypes.get_errno(), f"mount on {dst} failed")


def _inside(root, path):
    return Path(root) / Path(path).relative_to("/")


def enter_view(view, scratch, uid, disk_mb):
    """A private mount namespace whose root holds only what `view` lists
    (read-only binds at the same paths, copies of the kit emptied, the worker
    side put back) plus private tmpfs PRIVATE_DIRS and the working directory
    (`scratch`/work, a tmpfs of `disk_mb` owned by `uid`); then chroot into it.
    Raises OSError where the kernel gives no mount namespace."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        raise NoMountNamespace(ctypes.get_errno(), "unshare(CLONE_NEWNS) failed")
    libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    root = Path(scratch) / "root"
    root.mkdir(mode=0o755, exist_ok=True)
    _mount(libc, b"tmpfs", root, b"tmpfs", 0, b"mode=755,size=1m")
    # Parents before children: /dev before /dev/shm, /tmp before a venv under /tmp.
    plan = [(p, "bind") for p in view.binds] + [(p, "tmpfs") for p in PRIVATE_DIRS]
    bound = []
    for path, kind in sorted(plan, key=lambda item: Path(item[0]).parts):
        if kind == "bind" and any(b == path or Path(b) in Path(path).parents for b in bound):
            continue  # already reachable through a bind above it
        target = _inside(root, path)
        if kind == "tmpfs":
            if not os.path.isdir(path) or os.path.islink(path):
                continue
            target.mkdir(parents=True, exist_ok=True)
            _mount(libc, b"tmpfs", target, b"tmpfs", 0, f"mode=1777,size={disk_mb}m".encode())
            continue
        if os.path.islink(path):  # merged /usr: /lib -> usr/lib
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
    inner_work.mkdir(parents=True, exist_ok=True)
    os.chmod(inner_work.parent, 0o711)
    _mount(libc, b"tmpfs", inner_work, b"tmpfs", 0, f"mode=700,size={disk_mb}m,uid={uid},gid={uid}".encode())
    progress = Path(scratch) / "progress"
    if progress.exists():
        _bind(libc, progress, _inside(root, progress), read_only=False)
    os.chroot(root)
    os.chdir(work)


def _bind(libc, path, target, read_only=True):
    if os.path.isdir(path):
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.touch()
    _mount(libc, str(path).encode(), target, None, MS_BIND | MS_REC)
    if read_only:  # defence in depth: the worker's uid cannot write there anyway
        libc.mount(None, str(target).encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)


def restrict_by_mode(view):
    """Fallback where no mount namespace can be made (a container without
    CAP_SYS_ADMIN): the private root, the course's own folders and every copy
    of the kit's private part that the judge found become root-only (0700),
    and directories that block the way to the interpreter or the worker side
    get o+x (traverse, not list). What it cannot hide: any other
    world-readable copy (the README says so)."""
    for p in view.fallback_hide:
        try:
            os.chmod(p, 0o700)
        except OSError:
            pass
    for path in view.reach:
        parts = Path(path).parts
        for i in range(2, len(parts)):
            parent = Path(*parts[:i])
            mode = os.stat(parent).st_mode
            if not mode & 0o001:
                os.chmod(parent, (mode & 0o7777) | 0o001)

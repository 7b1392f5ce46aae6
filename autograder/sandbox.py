"""Start and talk to a sandboxed worker (`autograder.worker`).

Limits come from `grading.yml` and are enforced by the operating system:
RLIMIT_CPU (set per call from the judge with prlimit), RLIMIT_DATA (not
RLIMIT_AS: torch reserves ~640 MB of address space at import), RLIMIT_FSIZE
(printed output goes to a capped file), RLIMIT_NPROC, RLIMIT_CORE = 0, a
process group of its own that is killed whole, and a wall-clock timeout in the
judge. When the judge runs as root the worker also gets: a private mount
namespace in which the reference solutions and hidden suites are hidden under
empty tmpfs mounts and the shared writable directories (/tmp, /var/tmp,
/dev/shm, /run/lock) are private empty ones; a network namespace of its own
(no interface but a loopback that is down); a control group (`cgroup`) that
caps processes and memory for its whole tree, measures its peak memory and
kills whatever it left running; and an unprivileged uid (one per judge
process, held with a lock file, so concurrent judges never share one).
"""
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import wire
from autograder.cgroup import WorkerGroup
from autograder.forkserver import KIT_ROOT, worker_env

UID_BASE = 61000
# Directories any user may write to: each worker gets private empty ones, so a
# submission can neither leave files for another nor read what one left.
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000


class WorkerDied(Exception):
    """The worker is gone (crash, limit, timeout); `reason` says why in one line."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Limits:
    cpu_seconds_per_call: float = 20
    load_seconds: float = 90
    memory_mb: int = 3072
    output_bytes: int = 1_000_000
    processes: int = 64
    submission_cpu_seconds: float = 900
    disk_mb: int = 64
    reply_bytes: int = 256 << 20

    @classmethod
    def from_config(cls, cfg):
        known = {k: v for k, v in (cfg or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)


def protected_paths():
    """What the worker must not read: reference solutions and hidden suites."""
    import solutions

    return [Path(solutions.__file__).resolve().parent, Path(__file__).resolve().parent / "suites"]


def apply_limits(limits, uid, hide, reach, cgroups=(), scratch=None):
    """In the new worker process, before any student code: its control groups,
    its own session and process group, rlimits, and (root only) the private
    mount and network namespaces and the unprivileged uid."""
    WorkerGroup.join(cgroups)
    os.setsid()
    mb = 1 << 20
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_mb * mb, limits.memory_mb * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_bytes, limits.output_bytes))
    cpu = int(limits.load_seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, int(limits.submission_cpu_seconds)))
    if uid is not None:
        try:
            _prepare_mounts(hide, reach, scratch, uid, limits.disk_mb)
        except OSError:
            _restrict_by_mode(hide, reach)
        _private_network()
        if scratch:
            os.chdir(Path(scratch) / "work")  # as the new mounts show it
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))


def _libc():
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def _mount(libc, ctypes, src, dst, fstype, flags, data):
    if libc.mount(src, str(dst).encode(), fstype, flags, data) != 0:
        raise OSError(ctypes.get_errno(), f"mount on {dst} failed")


def _private_network():
    """A network namespace of the worker's own: no route anywhere, and its
    loopback is not the host's (root only; left as is where it fails)."""
    _libc()[1].unshare(CLONE_NEWNET)


def _under(path, parent):
    return Path(path) == Path(parent) or Path(parent) in Path(path).parents


def _prepare_mounts(hide, reach, scratch=None, uid=None, disk_mb=64):
    """In a private mount namespace (root only): private empty PRIVATE_DIRS
    and working directory (`scratch`/work), each a tmpfs of `disk_mb`, hide
    `hide` under empty tmpfs mounts, and make the paths in `reach` traversable
    by the unprivileged uid.

    A path such as the interpreter under /root (mode 700) is reached by
    mounting a tmpfs over the blocking directory and binding back only the
    child that leads to it; the host's permissions are left as they are. The
    same move keeps what the worker needs (the kit, its own scratch folder)
    inside the private /tmp.
    """
    ctypes, libc = _libc()
    MS_REC, MS_PRIVATE, MS_BIND = 0x4000, 1 << 18, 4096
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) failed")
    libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    stage, staged_count = Path("/mnt"), 0

    def stage_bind(path):
        nonlocal staged_count
        if staged_count == 0:
            _mount(libc, ctypes, b"tmpfs", stage, b"tmpfs", 0, b"mode=700")
        target = stage / str(staged_count)
        staged_count += 1
        target.mkdir()
        _mount(libc, ctypes, str(path).encode(), target, None, MS_BIND | MS_REC, None)
        return target

    keep = [Path(p) for p in list(reach) + ([scratch] if scratch else [])]
    for d in PRIVATE_DIRS:
        if os.path.islink(d) or not os.path.isdir(d):
            continue
        inside = [p for p in keep if _under(p, d) and p != Path(d)]
        inside = [p for p in inside if not any(q != p and _under(p, q) for q in inside)]  # topmost only
        staged = [(p, stage_bind(p)) for p in sorted(set(inside))]
        _mount(libc, ctypes, b"tmpfs", d, b"tmpfs", 0, f"mode=1777,size={disk_mb}m".encode())
        for p, target in staged:
            p.mkdir(parents=True, exist_ok=True)
            _mount(libc, ctypes, str(target).encode(), p, None, MS_BIND | MS_REC, None)
    if scratch and uid is not None:
        _mount(libc, ctypes, b"tmpfs", Path(scratch) / "work", b"tmpfs", 0,
               f"mode=700,size={disk_mb}m,uid={uid},gid={uid}".encode())
    # Level by level from the root, so that nested blocking directories
    # (/root (700)/a (700)/kit) are each opened in turn.
    depth = max(len(Path(p).parts) for p in reach) if reach else 0
    for i in range(2, depth):
        blocked = {}  # blocking directory at this depth -> children to bind back
        for path in reach:
            parts = Path(path).parts
            if len(parts) > i and not os.stat(Path(*parts[:i])).st_mode & 0o001:
                blocked.setdefault(Path(*parts[:i]), set()).add(parts[i])
        for parent, children in sorted(blocked.items()):
            staged = [(child, stage_bind(parent / child)) for child in sorted(children)]
            _mount(libc, ctypes, b"tmpfs", parent, b"tmpfs", 0, b"mode=755")
            for child, target in staged:
                (parent / child).mkdir()
                _mount(libc, ctypes, str(target).encode(), parent / child, None, MS_BIND | MS_REC, None)
    for p in hide:
        _mount(libc, ctypes, b"tmpfs", p, b"tmpfs", 0, b"size=4k,mode=000")


def _restrict_by_mode(hide, reach):
    """Fallback where no mount namespace can be made (a container without
    CAP_SYS_ADMIN): hidden paths become root-only (0700), and directories that
    block the way to the interpreter or the kit get o+x (traverse, not list)."""
    for p in hide:
        os.chmod(p, 0o700)
    for path in reach:
        parts = Path(path).parts
        for i in range(2, len(parts)):
            parent = Path(*parts[:i])
            mode = os.stat(parent).st_mode
            if not mode & 0o001:
                os.chmod(parent, (mode & 0o7777) | 0o001)


def reachable_paths():
    """What the worker must reach: the interpreter, its environment and the kit."""
    import torch

    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), KIT_ROOT,
             Path(torch.__file__).resolve().parent.parent, Path(sys.executable).resolve().parent}
    return sorted(str(p) for p in paths)


@dataclass
class Process:
    proc: subprocess.Popen
    to_worker: int
    from_worker: int
    scratch: Path
    group: WorkerGroup | None = None
    dead: str | None = None


_UID = {}


def worker_uid():
    """This judge process's own unprivileged uid for its workers (root only).

    Held with a lock file for the life of the process, so that concurrent
    judges (a pool, or two batches on one machine) never share a uid: a
    student's `kill(-1, SIGKILL)` then reaches no other submission's worker.
    """
    import fcntl

    if "uid" in _UID:
        return _UID["uid"]
    locks = Path(tempfile.gettempdir()) / "kit-worker-uids"
    locks.mkdir(mode=0o700, exist_ok=True)
    for uid in range(UID_BASE, UID_BASE + 4096):
        fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _UID.update(uid=uid, fd=fd)  # the lock lasts as long as this process
        return uid
    raise RuntimeError("no free worker uid")




class ForkedProcess:
    """A worker forked by the fork server: the parts of Popen the client uses."""

    def __init__(self, pid, server):
        self.pid = pid
        self.server = server
        self.returncode = None

    def _set(self, status):
        if status is not None:
            self.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    def poll(self):
        if self.returncode is None:
            self._set(self.server.wait(self.pid, 0))
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            self._set(self.server.wait(self.pid, 3600 if timeout is None else timeout))
            if self.returncode is None:
                raise subprocess.TimeoutExpired("worker", timeout)
        return self.returncode


class ForkServer:
    """The judge's side of `autograder.forkserver`: one per judge process."""

    def __init__(self):
        import socket

        from autograder import forkserver

        self._socket = socket
        # One started early by the command (`forkserver.prestart`), if any: its
        # imports then ran while this process imported torch and pytest.
        self.proc, self.sock = forkserver.take_prestarted() or forkserver.launch()

    def _ask(self, message, fds=()):
        import json

        if fds:
            self._socket.send_fds(self.sock, [json.dumps(message).encode()], list(fds))
        else:
            self.sock.send(json.dumps(message).encode())
        reply = self.sock.recv(1 << 16)
        if not reply:
            raise WorkerDied("the fork server is gone")
        return json.loads(reply)

    def spawn(self, limits, uid, hide, reach, scratch, env, fds, cgroups=()):
        reply = self._ask({
            "op": "fork", "limits": dict(limits.__dict__), "uid": uid, "hide": [str(p) for p in hide],
            "reach": list(reach), "scratch": str(scratch), "env": env, "cgroups": list(cgroups),
        }, fds)
        return ForkedProcess(reply["pid"], self)

    def wait(self, pid, timeout):
        return self._ask({"op": "wait", "pid": pid, "timeout": timeout})["status"]

    def close(self):
        try:
            self.sock.send(b'{"op": "exit"}')
        except OSError:
            pass
        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class WorkerClient:
    """One live worker process. Raises `WorkerDied` once it is gone."""

    def __init__(self, limits, forkserver=None):
        self.limits = limits
        self.forkserver = forkserver
        self.p = None
        self.peak_mb = None  # the largest peak of this client's workers (where measured)

    # -- lifecycle ------------------------------------------------------
    def start(self):
        uid = worker_uid() if os.geteuid() == 0 else None
        hide, reach = (protected_paths(), reachable_paths()) if uid is not None else ([], [])
        # scratch/: output.txt (opened here, handed over as a descriptor),
        # progress (the cell being run, for the judge) and work/ (the worker's
        # HOME and working directory; a private tmpfs where mounts are made).
        # Under a worker uid the worker may write those two, nothing else here.
        scratch = Path(tempfile.mkdtemp(prefix="kit-worker-"))
        (scratch / "work").mkdir(mode=0o700)
        (scratch / "progress").touch(mode=0o600)
        if uid is not None:
            for p in (scratch / "work", scratch / "progress"):
                os.chown(p, uid, uid)
        os.chmod(scratch, 0o711 if uid is not None else 0o700)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        out = open(scratch / "output.txt", "wb")
        env = worker_env(scratch)
        group = WorkerGroup.create(self.limits.processes, self.limits.memory_mb) if uid is not None else None
        cgroups = group.paths if group else []
        try:
            if self.forkserver is not None:
                proc = self.forkserver.spawn(self.limits, uid, hide, reach, scratch, env,
                                             (req_r, rep_w, out.fileno()), cgroups)
            else:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "autograder.worker", str(req_r), str(rep_w)],
                    pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    cwd=scratch / "work", env=env,
                    preexec_fn=lambda: apply_limits(self.limits, uid, hide, reach, cgroups, str(scratch)),
                )
        finally:
            out.close()
            os.close(req_r)
            os.close(rep_w)
        self.p = Process(proc, req_w, rep_r, scratch, group)

    def close(self):
        p = self.p
        if p is None:
            return
        if p.proc.poll() is None:
            try:
                wire_bytes = wire.encode({"op": "exit"})
                os.write(p.to_worker, wire_bytes)
            except OSError:
                pass
            try:
                p.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        for fd in (p.to_worker, p.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        if p.group is not None:
            peak = p.group.peak_mb()
            if peak is not None:
                self.peak_mb = max(self.peak_mb or 0.0, peak)
            p.group.remove()
        shutil.rmtree(p.scratch, ignore_errors=True)
        self.p = None

    def _kill(self):
        p = self.p
        try:
            os.killpg(p.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if p.group is not None:  # what left the process group (setsid, double fork) too
            p.group.kill_all()
        try:
            p.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def processes(self):
        """Processes in the worker's control group (None where unknown)."""
        return self.p.group.processes() if self.p is not None and self.p.group is not None else None

    @property
    def alive(self):
        return self.p is not None and self.p.dead is None

    def read_scratch_int(self, name):
        """A small integer the worker left in its scratch directory, or None."""
        try:
            return int((self.p.scratch / name).read_text()[:20].strip())
        except (OSError, ValueError, AttributeError):
            return None

    def output_tail(self, n=2000):
        """The end of what the student's code printed (it goes to a capped file)."""
        try:
            data = (self.p.scratch / "output.txt").read_bytes()
        except (OSError, AttributeError):
            return ""
        return data[-n:].decode(errors="replace")

    # -- requests -------------------------------------------------------
    def request(self, message, cpu_seconds, wall_seconds):
        """Send one request and wait for its reply, within the given budgets."""
        p = self.p
        if p is None or p.dead:
            raise WorkerDied(p.dead if p else "worker not started")
        # Root here lacks CAP_SYS_RESOURCE, so the judge cannot prlimit the
        # worker: the worker lowers its own soft RLIMIT_CPU before each request;
        # the hard limit (the submission's whole CPU budget, set before the
        # student's code ran) cannot be raised by it.
        message = dict(message, cpu_seconds=cpu_seconds)
        self._cpu_budget = cpu_seconds
        try:
            data = wire.encode(message)
            view = memoryview(data)
            while view:
                view = view[os.write(p.to_worker, view):]
        except (BrokenPipeError, OSError):
            self._died()
        deadline = time.monotonic() + wall_seconds
        buf = bytearray()
        need = 8
        body_len = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._died(timeout=wall_seconds)
            # With a control group, look every half second for a tree that hit
            # its process cap (a fork bomb): stop it then, with that reason,
            # rather than at the wall-clock limit.
            wait = min(remaining, 0.5) if p.group is not None else remaining
            ready, _, _ = select.select([p.from_worker], [], [], wait)
            if not ready:
                if p.group is not None and p.group.hit_process_limit():
                    self._kill()
                    p.dead = (f"started more processes or threads than the limit of {self.limits.processes} "
                              "(a fork bomb?) and was stopped")
                    raise WorkerDied(p.dead)
                continue
            chunk = os.read(p.from_worker, 1 << 20)
            if not chunk:
                self._died()
            buf += chunk
            if body_len is None and len(buf) >= 8:
                body_len = int.from_bytes(buf[:8], "big")
                if body_len > self.limits.reply_bytes:
                    self._kill()
                    p.dead = f"the worker sent a reply of {body_len} bytes, over the {self.limits.reply_bytes}-byte limit"
                    raise WorkerDied(p.dead)
                need = 8 + body_len
            if body_len is not None and len(buf) >= need:
                break
        try:
            return wire.decode(bytes(buf[8:need]))
        except wire.WireError as exc:
            self._kill()
            p.dead = f"the worker sent a malformed reply ({exc})"
            raise WorkerDied(p.dead) from None

    def _died(self, timeout=None):
        p = self.p
        if timeout is not None:
            self._kill()
            p.dead = f"timed out after {timeout:g} s (wall clock)"
            if p.group is not None and p.group.oom_killed():
                p.dead += f"; the kernel had killed a process of it for exceeding the memory limit of {self.limits.memory_mb} MB"
            raise WorkerDied(p.dead)
        try:
            p.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
        rc = p.proc.returncode
        self._kill()
        if p.group is not None and p.group.oom_killed():
            p.dead = f"exceeded the memory limit of {self.limits.memory_mb} MB (killed by the kernel)"
        elif rc is not None and rc < 0:
            sig = -rc
            if sig == signal.SIGXCPU:
                budget = getattr(self, "_cpu_budget", self.limits.cpu_seconds_per_call)
                p.dead = f"exceeded the CPU time limit of {budget:g} s (killed by SIGXCPU)"
            elif sig == signal.SIGXFSZ:
                p.dead = f"printed more than the {self.limits.output_bytes}-byte output limit"
            else:
                p.dead = f"crashed with signal {sig} ({signal.Signals(sig).name})"
        else:
            p.dead = f"the worker exited early (exit status {rc})"
        raise WorkerDied(p.dead)

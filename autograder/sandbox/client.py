"""One live worker as the judge sees it: start it (through the fork server,
or spawned), send it requests within CPU and wall-clock budgets, read its
replies (size-capped, decoded by `autograder.protocol.wire`), and turn every
way it can end (crash, any signal, a stop signal, limit, timeout, fork bomb,
any exit status, broken pipes, malformed reply) into `WorkerDied` with a
one-line reason. Nothing else leaves `request`: an unexpected error while
reading a dead worker is `WorkerDied` too (and a line on the judge's stderr).
The one exception is the machine's fault, never the student's: a worker that
ended because a confinement step failed, before any student code ran, raises
`faults.Unconfined` (the judge reports it as internal_error, exit status 3).
"""

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from autograder.faults import KitFault, Unconfined
from autograder.messages import number, t
from autograder.protocol import wire
from autograder.sandbox import view as view_mod
from autograder.sandbox.cgroup import WorkerGroup
from autograder.sandbox.confine import CONFINE_FAILED, apply_limits
from autograder.sandbox.confine import failure as confine_failure
from autograder.sandbox.limits import Limits
from autograder.sandbox.uids import worker_uid
from autograder.worker.runner import PIPES_LOST

if TYPE_CHECKING:  # the fork server's module is imported where it is used
    from autograder.sandbox.forkserver import ForkedProcess, ForkServer

T = TypeVar("T")

# A SIGXCPU after this share of the call's budget (or of the submission's) is the limit's: the
# kernel sends it at the limit, and /proc's figures for a process killed under load lag the
# kernel's own by more than any fixed slack; one well before it is the student's own kill().
CPU_SHARE = 0.5
POLL = 0.5  # seconds between looks at a worker that has not answered yet (stopped? fork bomb?)
EXIT_GRACE = 2.0  # seconds a worker whose pipe closed has to exit before it counts as having closed it


class WorkerDied(Exception):
    """The worker is gone (crash, limit, timeout); `reason` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Process:
    proc: "subprocess.Popen[bytes] | ForkedProcess"
    to_worker: int
    from_worker: int
    scratch: Path
    group: WorkerGroup | None = None
    dead: str | None = None


class WorkerClient:
    """One live worker process. Raises `WorkerDied` once it is gone."""

    def __init__(self, limits: Limits, forkserver: "ForkServer | None" = None) -> None:
        self.limits = limits
        self.forkserver = forkserver
        self.p: Process | None = None
        self.peak_mb: float | None = None  # the largest peak of this client's workers (where measured)

    # -- lifecycle ------------------------------------------------------
    def start(self) -> None:
        uid = worker_uid() if os.geteuid() == 0 else None
        view = view_mod.compute() if uid is not None else None
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
        env = view_mod.worker_env(scratch)
        group = WorkerGroup.create(self.limits.processes, self.limits.memory_mb) if uid is not None else None
        cgroups = group.paths if group else []
        proc: subprocess.Popen[bytes] | ForkedProcess
        try:
            if self.forkserver is not None:
                proc = self.forkserver.spawn(
                    self.limits, uid, view, scratch, env, (req_r, rep_w, out.fileno()), cgroups
                )
            else:
                proc = subprocess.Popen(
                    [view_mod.interpreter(), "-m", "autograder.worker", str(req_r), str(rep_w)],
                    pass_fds=(req_r, rep_w),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=scratch / "work",
                    env=env,
                    preexec_fn=lambda: apply_limits(self.limits, uid, view, cgroups, str(scratch)),
                )
        finally:
            out.close()
            os.close(req_r)
            os.close(rep_w)
        self.p = Process(proc, req_w, rep_r, scratch, group)

    def close(self) -> None:
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

    def _kill(self) -> None:
        p = self.p
        assert p is not None
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

    def processes(self) -> int | None:
        """Processes in the worker's control group (None where unknown)."""
        return self.p.group.processes() if self.p is not None and self.p.group is not None else None

    @property
    def pid(self) -> int | None:
        return self.p.proc.pid if self.p is not None else None

    def group_pids(self) -> set[int] | None:
        """The processes of the worker's control group (None without one)."""
        return self.p.group.pids() if self.p is not None and self.p.group is not None else None

    def memory_charged(self) -> int | None:
        """Bytes charged to the worker's control group now (None without a memory controller)."""
        return self.p.group.usage_bytes() if self.p is not None and self.p.group is not None else None

    def lower_memory_limit(self, limit: int) -> bool:
        """Lower the control group's memory limit for what is left of this worker's life."""
        return self.p is not None and self.p.group is not None and self.p.group.lower_memory_limit(limit)

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the worker's control group for memory."""
        return self.p is not None and self.p.group is not None and self.p.group.oom_killed()

    @property
    def alive(self) -> bool:
        return self.p is not None and self.p.dead is None

    def read_scratch_int(self, name: str) -> int | None:
        """A small integer the worker left in its scratch directory, or None."""
        if self.p is None:
            return None
        try:
            return int((self.p.scratch / name).read_text()[:20].strip())
        except (OSError, ValueError, AttributeError):
            return None

    # -- requests -------------------------------------------------------
    def request(
        self,
        message: dict[str, Any],
        cpu_seconds: float,
        wall_seconds: float,
        on_callback: Callable[[dict[str, Any]], Any] | None = None,
    ) -> Any:
        """Send one request and wait for its reply, within the given budgets.

        While it runs, the worker may ask the judge to stand in for a graded
        function (`{"op": "callback", ...}`, see `judge.stand_in`): with
        `on_callback`, each such message is answered with what it returns and
        the wait goes on within the same budgets; without, it is the reply."""
        p = self.p
        if p is None or p.dead:
            raise WorkerDied(p.dead if p is not None and p.dead else t("died_not_started"))
        # Root here lacks CAP_SYS_RESOURCE, so the judge cannot prlimit the
        # worker: the worker lowers its own soft RLIMIT_CPU before each request;
        # the hard limit (the submission's whole CPU budget, set before the
        # student's code ran) cannot be raised by it.
        message = dict(message, cpu_seconds=cpu_seconds)
        self._cpu_budget = cpu_seconds
        self._cpu_start = self._cpu_time()
        self._guarded(self._send, message)
        deadline = time.monotonic() + wall_seconds
        while True:
            reply = self._guarded(self._read, deadline, wall_seconds)
            if on_callback is None or not (isinstance(reply, dict) and reply.get("op") == "callback"):
                return reply
            answer = on_callback(reply)  # the judge's own code: its errors are the kit's, never hidden here
            self._guarded(self._send, answer)

    def _guarded(self, step: Callable[..., T], *args: Any) -> T:
        """`step(*args)`; any error but WorkerDied (a case nobody foresaw while
        talking to a dying worker) ends the worker with a reason, and is
        printed on the judge's stderr for the staff."""
        try:
            return step(*args)
        except (WorkerDied, KitFault):
            raise
        except Exception as exc:  # noqa: BLE001 - defensive: never an internal error for the student
            raise self._unexpected(exc) from None

    def _unexpected(self, exc: Exception) -> WorkerDied:
        assert self.p is not None
        print(
            f"kit: worker {getattr(self.p.proc, 'pid', '?')}: unexpected {type(exc).__name__} while reading it: "
            f"{str(exc)[:300]}",
            file=sys.stderr,
        )
        try:
            self._kill()
        except Exception:  # noqa: BLE001 - the reason below is what matters now
            pass
        self.p.dead = t("died_unexpected", why=type(exc).__name__)
        return WorkerDied(self.p.dead)

    def _cpu_time(self) -> float | None:
        """The worker's CPU seconds so far (user + system, all its threads), from
        /proc (None where unreadable). A zombie keeps its times until reaped."""
        if self.p is None:
            return None
        try:
            text = Path(f"/proc/{self.p.proc.pid}/stat").read_text()
            fields = text[text.rindex(")") + 2 :].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    def _stop_signal(self) -> int | None:
        """The signal that stopped the worker (it is in state T or t), else None.
        Where the worker is this process's child, waitid says which; a forked
        one is the fork server's child: it leads a session of its own, so its
        process group is orphaned, and the kernel discards SIGTSTP, SIGTTIN and
        SIGTTOU there: SIGSTOP is the one signal that stops it."""
        assert self.p is not None
        pid = self.p.proc.pid
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
            state = text[text.rindex(")") + 2 :].split()[0]
        except (OSError, ValueError, IndexError):
            return None
        if state not in ("T", "t"):
            return None
        try:
            info = os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG | os.WNOWAIT)
        except (ChildProcessError, OSError):
            info = None
        if info is not None and info.si_code == os.CLD_STOPPED:
            return info.si_status
        return int(signal.SIGSTOP)

    def _send(self, message: Any) -> None:
        p = self.p
        assert p is not None
        try:
            data = wire.encode(message)
            view = memoryview(data)
            while view:
                view = view[os.write(p.to_worker, view) :]
        except (BrokenPipeError, OSError):
            self._died()

    def _read(self, deadline: float, wall_seconds: float) -> Any:
        """One message from the worker, by `deadline` (time.monotonic)."""
        p = self.p
        assert p is not None
        buf = bytearray()
        need = 8
        body_len: int | None = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._died(timeout=wall_seconds)
            # Look every half second for a tree that hit its process cap (a
            # fork bomb, with a control group) or a worker that a stop signal
            # froze: end it then, with that reason, rather than at the
            # wall-clock limit.
            ready, _, _ = select.select([p.from_worker], [], [], min(remaining, POLL))
            if not ready:
                if p.group is not None and p.group.hit_process_limit():
                    self._kill()
                    p.dead = t("died_fork_bomb", limit=self.limits.processes)
                    raise WorkerDied(p.dead)
                stop = self._stop_signal()
                if stop is not None:
                    self._kill()
                    p.dead = t("died_stopped", signal=stop, name=_signal_name(stop) or "?")
                    raise WorkerDied(p.dead)
                continue
            try:
                chunk = os.read(p.from_worker, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self._died()
            buf += chunk
            if body_len is None and len(buf) >= 8:
                body_len = int.from_bytes(buf[:8], "big")
                if body_len > self.limits.reply_bytes:
                    self._kill()
                    p.dead = t("died_reply_size", size=body_len, limit=self.limits.reply_bytes)
                    raise WorkerDied(p.dead)
                need = 8 + body_len
            if body_len is not None and len(buf) >= need:
                break
        try:
            return wire.decode(memoryview(buf)[8:need])  # no copy of the whole reply
        except wire.WireError as exc:
            self._kill()
            p.dead = t("died_malformed", why=exc)
            raise WorkerDied(p.dead) from None

    def _died(self, timeout: float | None = None) -> NoReturn:
        """The worker is gone (or past its wall clock): stop what is left of it,
        word why, and raise WorkerDied. Never anything else."""
        p = self.p
        assert p is not None
        try:
            p.dead = self._death_reason(timeout)
        except Unconfined as exc:  # the machine's fault, never the student's: it leaves as it is
            p.dead = str(exc)
            raise
        except Exception as exc:  # noqa: BLE001 - defensive: never an internal error for the student
            raise self._unexpected(exc) from None
        raise WorkerDied(p.dead)

    def _death_reason(self, timeout: float | None) -> str:
        p = self.p
        assert p is not None
        if timeout is not None:
            self._kill()
            reason = t("died_timeout", seconds=number(timeout, "g"))
            if p.group is not None and p.group.oom_killed():
                reason += t("died_timeout_oom", mb=self.limits.memory_mb)
            elif p.group is not None and p.group.reached_memory_limit():
                reason += t("died_timeout_memory_full", mb=self.limits.memory_mb)
            return reason
        cpu_end = self._cpu_time()  # before it is reaped
        ran_on = False
        try:
            # A process closes its descriptors as it exits: the pipe's end and
            # the exit are moments apart (EXIT_GRACE leaves room for a loaded box).
            p.proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            # Its reply pipe closed, yet it runs on: the student's code closed it.
            ran_on = True
            self._kill()
        rc = p.proc.returncode
        self._kill()
        if p.group is not None and p.group.oom_killed():
            return t("died_memory", mb=self.limits.memory_mb)
        if ran_on or rc == PIPES_LOST:
            return t("died_pipes")
        if rc is not None and rc < 0:
            return self._signal_reason(-rc, cpu_end)
        if rc == CONFINE_FAILED and (step := confine_failure(p.scratch)) is not None:
            raise Unconfined(step)  # a confinement step failed (named): no student code ran
        return t("died_exit", code=rc)

    def _signal_reason(self, sig: int, cpu_end: float | None) -> str:
        if sig == signal.SIGXCPU and self._cpu_limit_reached(cpu_end):
            budget = getattr(self, "_cpu_budget", self.limits.cpu_seconds_per_call)
            return t("died_cpu", seconds=number(budget, "g"))
        if sig == signal.SIGXFSZ and self._output_full():
            return t("died_output", bytes=self.limits.output_bytes)
        name = _signal_name(sig)
        if name is None:
            return t("died_signal_unnamed", signal=sig)
        return t("died_signal", signal=sig, name=name)

    def _cpu_limit_reached(self, cpu_end: float | None) -> bool:
        """Whether a SIGXCPU came from the CPU limit (the call's budget or the
        submission's) rather than from the student's own kill(); where the
        times are unknown, the limit."""
        start = getattr(self, "_cpu_start", None)
        if cpu_end is None or start is None:
            return True
        budget = getattr(self, "_cpu_budget", self.limits.cpu_seconds_per_call)
        return cpu_end - start >= budget * CPU_SHARE or cpu_end >= self.limits.submission_cpu_seconds * CPU_SHARE

    def _output_full(self) -> bool:
        """Whether the printed output reached its limit (else a SIGXFSZ was the student's own)."""
        assert self.p is not None
        try:
            return (self.p.scratch / "output.txt").stat().st_size >= self.limits.output_bytes
        except OSError:
            return True


def _signal_name(sig: int) -> str | None:
    """`SIGSTOP` for 19; None for a number with no name here (a real-time
    signal between SIGRTMIN and SIGRTMAX, or one the kernel does not define)."""
    try:
        return signal.Signals(sig).name
    except (ValueError, TypeError):
        return None

"""One live worker as the judge sees it: start it (through the fork server,
or spawned), send it requests within CPU and wall-clock budgets, read its
replies (size-capped, decoded by `autograder.protocol.wire`), and turn every
way it can end (crash, limit, timeout, fork bomb, malformed reply) into
`WorkerDied` with a one-line reason.
"""
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.messages import t
from autograder.protocol import wire
from autograder.sandbox import view as view_mod
from autograder.sandbox.cgroup import WorkerGroup
from autograder.sandbox.confine import CONFINE_FAILED, VIEW_FAILED, apply_limits
from autograder.sandbox.confine import failure as confine_failure
from autograder.sandbox.uids import worker_uid


class WorkerDied(Exception):
    """The worker is gone (crash, limit, timeout); `reason` says why in one line."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Process:
    proc: subprocess.Popen
    to_worker: int
    from_worker: int
    scratch: Path
    group: WorkerGroup | None = None
    dead: str | None = None


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
        try:
            if self.forkserver is not None:
                proc = self.forkserver.spawn(self.limits, uid, view, scratch, env,
                                             (req_r, rep_w, out.fileno()), cgroups)
            else:
                proc = subprocess.Popen(
                    [view_mod.interpreter(), "-m", "autograder.worker", str(req_r), str(rep_w)],
                    pass_fds=(req_r, rep_w), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    cwd=scratch / "work", env=env,
                    preexec_fn=lambda: apply_limits(self.limits, uid, view, cgroups, str(scratch)),
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

    # -- requests -------------------------------------------------------
    def request(self, message, cpu_seconds, wall_seconds, on_callback=None):
        """Send one request and wait for its reply, within the given budgets.

        While it runs, the worker may ask the judge to stand in for a graded
        function (`{"op": "callback", ...}`, see `judge.stand_in`): with
        `on_callback`, each such message is answered with what it returns and
        the wait goes on within the same budgets; without, it is the reply."""
        p = self.p
        if p is None or p.dead:
            raise WorkerDied(p.dead if p else t("died_not_started"))
        # Root here lacks CAP_SYS_RESOURCE, so the judge cannot prlimit the
        # worker: the worker lowers its own soft RLIMIT_CPU before each request;
        # the hard limit (the submission's whole CPU budget, set before the
        # student's code ran) cannot be raised by it.
        message = dict(message, cpu_seconds=cpu_seconds)
        self._cpu_budget = cpu_seconds
        self._send(message)
        deadline = time.monotonic() + wall_seconds
        while True:
            reply = self._read(deadline, wall_seconds)
            if on_callback is None or not (isinstance(reply, dict) and reply.get("op") == "callback"):
                return reply
            self._send(on_callback(reply))

    def _send(self, message):
        p = self.p
        try:
            data = wire.encode(message)
            view = memoryview(data)
            while view:
                view = view[os.write(p.to_worker, view):]
        except (BrokenPipeError, OSError):
            self._died()

    def _read(self, deadline, wall_seconds):
        """One message from the worker, by `deadline` (time.monotonic)."""
        p = self.p
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
                    p.dead = t("died_fork_bomb", limit=self.limits.processes)
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

    def _died(self, timeout=None):
        p = self.p
        if timeout is not None:
            self._kill()
            p.dead = t("died_timeout", seconds=f"{timeout:g}")
            if p.group is not None and p.group.oom_killed():
                p.dead += t("died_timeout_oom", mb=self.limits.memory_mb)
            raise WorkerDied(p.dead)
        try:
            p.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
        rc = p.proc.returncode
        self._kill()
        if p.group is not None and p.group.oom_killed():
            p.dead = t("died_memory", mb=self.limits.memory_mb)
        elif rc is not None and rc < 0:
            sig = -rc
            if sig == signal.SIGXCPU:
                budget = getattr(self, "_cpu_budget", self.limits.cpu_seconds_per_call)
                p.dead = t("died_cpu", seconds=f"{budget:g}")
            elif sig == signal.SIGXFSZ:
                p.dead = t("died_output", bytes=self.limits.output_bytes)
            else:
                p.dead = t("died_signal", signal=sig, name=signal.Signals(sig).name)
        elif rc == CONFINE_FAILED and (step := confine_failure(p.scratch)) is not None:
            p.dead = t("died_confine", step=step)  # a confinement step failed (named): no student code ran
        elif rc == VIEW_FAILED:
            p.dead = t("died_view")
        else:
            p.dead = t("died_exit", code=rc)
        raise WorkerDied(p.dead)

"""A fork server for workers: pay the torch import once per judge, not once per submission.

The judge starts `python -m autograder.sandbox.forkserver FD` (trusted code only). It
imports torch but runs no torch operation (forking after one hung every child
when measured on this machine), then waits on a Unix socket for requests:

    {"op": "fork", ...} + 3 file descriptors (requests in, replies out, output file)
        forks a child that applies the same limits as a spawned worker
        (`confine.apply_limits`: own session, rlimits, private mount namespace
        and file system view, unprivileged uid) and serves the judge
        (`autograder.worker.runner.serve`); replies {"pid": N}
    {"op": "warm_training"}
        imports what an optimizer's first step imports (`warm.training`), for the
        children forked after it; replies {"ok": true}
    {"op": "wait", "pid": N, "timeout": s}
        reaps the child within `timeout` seconds; replies {"status": raw wait
        status} or {"status": null} while it still runs

The children are the fork server's, so the judge learns how one ended (exit
code, signal) through "wait".

`ForkServer` is the judge's side of it: one per judge process.

This module imports nothing heavy at the top: `prestart()` starts the server
(its torch import) as the first thing a command does, while the judge is still
importing torch and pytest and collecting the suites. The server imports no
module of the judge or of the private root: what its children inherit in
memory is torch, matplotlib, the confinement and the worker side.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from autograder.sandbox.view import interpreter, worker_env

if TYPE_CHECKING:  # imported by the child itself (`_child`), not at the top
    from autograder.sandbox.limits import Limits
    from autograder.sandbox.view import View

MAX_MESSAGE = 1 << 16


class ServerProcess(Protocol):
    """A fork server's process, as its judge holds it: a Popen, or what `autograder.zygote` forked."""

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int | None: ...
    def kill(self) -> None: ...


_PRESTARTED: list[tuple[ServerProcess, socket.socket]] = []


def startup_env() -> dict[str, str]:
    """A fork server's whole environment when it starts: a worker's, nothing of the judge's."""
    return dict(worker_env("/tmp"), HOME="/tmp", TMPDIR="/tmp", MPLCONFIGDIR="/tmp")


def launch() -> tuple[ServerProcess, socket.socket]:
    """Start a fork server process; returns (Popen, the judge's socket)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    proc = subprocess.Popen(
        [interpreter(), "-m", "autograder.sandbox.forkserver", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        stdin=subprocess.DEVNULL,
        cwd="/",
        env=startup_env(),
    )
    theirs.close()
    return proc, ours


def prestart() -> None:
    """Start one fork server now, for the next `sandbox.ForkServer()` of this process to take."""
    if not _PRESTARTED:
        _PRESTARTED.append(launch())


def attach(proc: ServerProcess, sock: socket.socket) -> None:
    """A fork server this process already has (`autograder.zygote` forked it), for the next
    `ForkServer()` to take; `proc` has Popen's poll, wait and kill."""
    _PRESTARTED.append((proc, sock))


def take_prestarted() -> tuple[ServerProcess, socket.socket] | None:
    return _PRESTARTED.pop() if _PRESTARTED else None


def _child(req: dict[str, Any], fds: list[int]) -> None:
    from autograder.sandbox.confine import apply_limits
    from autograder.sandbox.limits import Limits
    from autograder.sandbox.view import View
    from autograder.worker.runner import serve as serve_judge

    req_r, rep_w, out = fds
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(os.path.join(req["scratch"], "work"))
    view = View.from_dict(req["view"]) if req.get("view") else None
    apply_limits(Limits(**req["limits"]), req["uid"], view, req.get("cgroups", ()), req["scratch"])
    serve_judge(req_r, rep_w)


def preload() -> None:
    """What a fork server loads before its first fork (trusted code only, no torch
    operation): torch, the confinement, the worker side (whose plots are stand-ins:
    `worker.plots`, so no matplotlib). Also run by the
    one-submission judge's first process (`autograder.zygote`), which forks its fork
    server after it."""
    import torch  # noqa: F401 - imported, never used: forking stays safe

    from autograder.sandbox import warm

    warm.without_dynamo()  # meta-device ops no longer import torch._dynamo (~2 s) in each worker
    warm.symbolic_shapes()  # what torch's meta-device reductions import on first use, once here
    from autograder.sandbox import confine, limits, view  # noqa: F401 - loaded once, shared by every child
    from autograder.worker import plots, runner  # noqa: F401


def serve(fd: int, preloaded: bool = False) -> None:
    from autograder.sandbox import pdeath

    pdeath.die_with_parent(ignore_interrupt=True, peer_fd=fd)  # SIGKILL when the judge dies; Ctrl-C is its to act on
    sock = socket.socket(fileno=fd)
    if not preloaded:
        preload()

    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        except OSError:
            return
        if not msg:
            return
        req = json.loads(msg)
        if req["op"] == "fork":
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    sock.close()
                    _child(req, fds)
                except BaseException:  # noqa: BLE001 - the child must never return into this loop
                    code = 70
                finally:
                    os._exit(code)
            for f in fds:
                os.close(f)
            sock.send(json.dumps({"pid": pid}).encode())
        elif req["op"] == "warm_training":
            from autograder.sandbox import warm

            warm.training()
            sock.send(b'{"ok": true}')
        elif req["op"] == "wait":
            deadline = time.monotonic() + float(req.get("timeout", 0))
            status = None
            while True:
                try:
                    done, raw = os.waitpid(req["pid"], os.WNOHANG)
                except ChildProcessError:
                    done, raw = req["pid"], 0
                if done:
                    status = raw
                    break
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
            sock.send(json.dumps({"status": status}).encode())
        elif req["op"] == "exit":
            return


class ForkedProcess:
    """A worker forked by the fork server: the parts of Popen the client uses."""

    def __init__(self, pid: int, server: "ForkServer") -> None:
        self.pid = pid
        self.server = server
        self.returncode: int | None = None

    def _set(self, status: int | None) -> None:
        if status is not None:
            self.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    def poll(self) -> int | None:
        if self.returncode is None:
            self._set(self.server.wait(self.pid, 0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            self._set(self.server.wait(self.pid, 3600 if timeout is None else timeout))
            if self.returncode is None:
                raise subprocess.TimeoutExpired("worker", timeout)  # type: ignore[arg-type]  # None: it waited 3600 s
        return self.returncode


class ForkServer:
    """The judge's side of the fork server: one per judge process."""

    def __init__(self) -> None:
        import socket

        self._socket = socket
        # One started early by the command (`prestart`), if any: its imports
        # then ran while this process imported torch and pytest.
        self.proc, self.sock = take_prestarted() or launch()
        # what a bare worker forked here holds (data bytes, control-group bytes or None): the
        # judge measures it once for the memory caps of calls (`judge.remote.Remote._cap`)
        self.bare_worker: tuple[int, int | None] | None = None
        self.warmed = False  # whether `warm_training` ran in the server now up

    def warm_training(self) -> None:
        """Have the server load what an optimizer's step imports, once, before the workers of
        an assignment that trains are forked (`warm.training`)."""
        from autograder.sandbox.client import WorkerDied

        if not self.warmed:
            try:
                self._ask({"op": "warm_training"})
            except WorkerDied:  # only a speed-up: the next fork restarts a server that is gone
                return
            self.warmed = True

    def _ask(self, message: dict[str, Any], fds: Sequence[int] = ()) -> Any:
        import json

        try:
            if fds:
                self._socket.send_fds(self.sock, [json.dumps(message).encode()], list(fds))
            else:
                self.sock.send(json.dumps(message).encode())
            reply = self.sock.recv(1 << 16)
        except OSError:
            reply = b""
        if not reply:
            from autograder.sandbox.client import WorkerDied

            raise WorkerDied("the fork server is gone")
        return json.loads(reply)

    def spawn(
        self,
        limits: "Limits",
        uid: int | None,
        view: "View | None",
        scratch: str | Path,
        env: dict[str, str],
        fds: Sequence[int],
        cgroups: Sequence[str] = (),
    ) -> ForkedProcess:
        from autograder.sandbox.client import WorkerDied

        message = {
            "op": "fork",
            "limits": dict(limits.__dict__),
            "uid": uid,
            "view": view.to_dict() if view is not None else None,
            "scratch": str(scratch),
            "env": env,
            "cgroups": list(cgroups),
        }
        try:
            reply = self._ask(message, fds)
        except WorkerDied:  # the server died (the kernel's OOM killer in a small box): a fresh one, once
            self._restart()
            reply = self._ask(message, fds)
        return ForkedProcess(reply["pid"], self)

    def _restart(self) -> None:
        try:
            self.sock.close()
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.proc, self.sock = launch()
        self.warmed = False

    def wait(self, pid: int, timeout: float) -> int | None:
        from autograder.sandbox.client import WorkerDied

        try:
            return self._ask({"op": "wait", "pid": pid, "timeout": timeout})["status"]
        except WorkerDied:  # its server is gone, and with it (parent-death signal) the worker
            return int(signal.SIGKILL)

    def close(self) -> None:
        try:
            self.sock.send(b'{"op": "exit"}')
        except OSError:
            pass
        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
    sys.exit(0)

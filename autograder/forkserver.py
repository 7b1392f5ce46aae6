"""A fork server for workers: pay the torch import once per judge, not once per submission.

The judge starts `python -m autograder.forkserver FD` (trusted code only). It
imports torch but runs no torch operation (forking after one hung every child
when measured on this machine), then waits on a Unix socket for requests:

    {"op": "fork", ...} + 3 file descriptors (requests in, replies out, output file)
        forks a child that applies the same limits as a spawned worker
        (`sandbox.apply_limits`: own session, rlimits, private mount namespace,
        unprivileged uid) and serves the judge (`worker.serve`); replies {"pid": N}
    {"op": "wait", "pid": N, "timeout": s}
        reaps the child within `timeout` seconds; replies {"status": raw wait
        status} or {"status": null} while it still runs

The children are the fork server's, so the judge learns how one ended (exit
code, signal) through "wait".

This module imports nothing heavy at the top: `prestart()` starts the server
(its torch import) as the first thing a command does, while the judge is still
importing torch and pytest and collecting the suites.
"""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

MAX_MESSAGE = 1 << 16
KIT_ROOT = Path(__file__).resolve().parent.parent
_PRESTARTED = []


def worker_env(scratch):
    """The whole environment of a worker: nothing of the judge's; PATH holds
    only the interpreter's folder and the system's."""
    work = str(Path(scratch) / "work")
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "TMPDIR": work,
        "KIT_PROGRESS": str(Path(scratch) / "progress"),
        "LANG": "C.UTF-8",
        # The worker's uid has no passwd entry: getpass.getuser() (torch calls it
        # on some first uses, e.g. the meta device in torch 2.11) reads these first.
        "USER": "kit-worker",
        "LOGNAME": "kit-worker",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": work,
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(KIT_ROOT),
    }
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def launch():
    """Start a fork server process; returns (Popen, the judge's socket)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(worker_env("/tmp"), HOME="/tmp", TMPDIR="/tmp", MPLCONFIGDIR="/tmp")
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder.forkserver", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, cwd="/", env=env,
    )
    theirs.close()
    return proc, ours


def prestart():
    """Start one fork server now, for the next `sandbox.ForkServer()` of this process to take."""
    if not _PRESTARTED:
        _PRESTARTED.append(launch())


def take_prestarted():
    return _PRESTARTED.pop() if _PRESTARTED else None


def _child(req, fds):
    from autograder import sandbox, worker

    req_r, rep_w, out = fds
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(os.path.join(req["scratch"], "work"))
    sandbox.apply_limits(sandbox.Limits(**req["limits"]), req["uid"], req["hide"], req["reach"],
                         req.get("cgroups", ()), req["scratch"])
    worker.serve(req_r, rep_w)


def serve(fd):
    sock = socket.socket(fileno=fd)
    import torch  # noqa: F401 - imported, never used: forking stays safe

    try:  # torch imports torch._dynamo (~1 s here) on the first meta-device op: import it once, run nothing
        import torch._dynamo  # noqa: F401
    except Exception:  # noqa: BLE001 - an optional speed-up; the worker imports it itself if needed
        pass

    from autograder import sandbox, worker  # noqa: F401 - loaded once, shared by every child

    try:  # every notebook draws its heatmap: load matplotlib (no figure, no torch op) once too
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        pass

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


if __name__ == "__main__":
    serve(int(sys.argv[1]))
    sys.exit(0)

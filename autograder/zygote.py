"""One torch import for a one-submission command (`gradescope`, `ci`, `grade` of one file).

Such a command needs two processes that import torch: the judge and its fork
server (whose children become the workers). On Gradescope's half a CPU each
import costs about 4 s of wall time. Here they share one:

    the command (this module's `run`: no torch, no grading)
      └─ the judge process, started clean: `python -m autograder --zygote FD`
           with the fork server's own environment (nothing of the command's),
           loads what a fork server loads (`forkserver.preload`: torch, the
           confinement, the worker side, matplotlib), then
           ├─ forks its fork server, which serves it as usual (`forkserver.serve`)
           └─ only then receives the command's argv, environment and working
              folder over its socket, takes them, and runs the command as the
              judge (`autograder.cli.main`, passed in by `autograder.__main__`),
              its exit status sent back.

So the fork server, and every worker it forks, holds in memory only what it
had when it was forked: the imports, a clean environment, no argument, nothing
of the private root, which the judge loads after the fork. The two share
torch's pages (copy on write) and its import's CPU.

The judge dies with the command (parent-death signal); its fork server dies
with the judge. Ctrl-C reaches the judge (and the command, which waits); a
SIGINT or SIGTERM sent to the command alone is passed on to the judge. Should
the fork server die (the kernel's OOM killer), the judge starts a fresh one
(`ForkServer._restart`), as before.
"""

import json
import os
import signal
import socket
import subprocess
import sys

MAX_REQUEST = 1 << 22  # the command's argv and environment


def _t(key, **fields):
    """A catalog message, imported only when a line is printed (the fork server starts without it)."""
    from autograder.messages import t

    return t(key, **fields)


def run(argv):
    """Run `python -m autograder ARGV` in a judge process started from a clean environment
    (see above); returns its exit status."""
    from autograder.sandbox.forkserver import startup_env
    from autograder.sandbox.view import interpreter

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for s in (ours, theirs):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_REQUEST)
    proc = subprocess.Popen(
        [interpreter(), "-m", "autograder", "--zygote", str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        stdin=subprocess.DEVNULL,
        cwd="/",
        env=startup_env(),
    )
    theirs.close()

    def forward(signum, frame):
        try:
            proc.send_signal(signum)
        except OSError:
            pass

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        request = {"argv": list(argv), "env": dict(os.environ), "cwd": os.getcwd()}
        try:
            ours.send(json.dumps(request).encode())
            reply = ours.recv(1 << 16)
        except OSError as exc:  # too large an environment, say: the judge reads end of file and stops
            print(_t("judge_cannot_start", reason=exc.strerror or exc), file=sys.stderr)
            reply = b""
        ours.close()
        code = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        ours.close()
    if reply:
        try:
            return int(json.loads(reply)["code"])
        except (ValueError, KeyError, TypeError):
            pass
    if code < 0:
        print(_t("judge_killed", signal=signal.Signals(-code).name), file=sys.stderr)
        return 128 - code
    return code or 70


class _Child:
    """The fork server as a child of this process: the parts of Popen `ForkServer` uses."""

    def __init__(self, pid):
        self.pid, self.returncode = pid, None

    def poll(self):
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("fork server", timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def serve(fd, main):
    """The judge process (see above): `main(argv)` runs the command's verb as the judge.
    Does not return."""
    _exit(_serve(fd, main))


def _serve(fd, main):
    from autograder.sandbox import forkserver, pdeath

    pdeath.die_with_parent(peer_fd=fd)
    sock = socket.socket(fileno=fd)
    forkserver.preload()
    server_end, judge_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # the fork server: nothing of the command has reached this process
        code = 0
        try:
            sock.close()
            judge_end.close()
            forkserver.serve(server_end.detach(), preloaded=True)
        except BaseException:  # noqa: BLE001 - never return into the judge's code
            code = 70
        finally:
            os._exit(code)
    server_end.close()
    forkserver.attach(_Child(pid), judge_end)
    msg = sock.recv(MAX_REQUEST)
    if not msg:
        return 70
    req = json.loads(msg)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(req["cwd"])
    try:
        code = main(req["argv"])
    except SystemExit as exc:  # argparse's errors and --help
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        sock.send(json.dumps({"code": code}).encode())
    except OSError:
        pass
    return code


def _exit(code):
    """End now: the exit handlers run (clean-ups registered with atexit and
    weakref.finalize), the interpreter's teardown of torch's thousands of
    modules (0.6 s of CPU) does not."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)

"""Any way a worker ends (any signal, a stop signal, any exit status, its pipes
closed or flooded) costs the call it was in, with a one-line reason, and
nothing else: the next call gets a fresh worker. Real workers (under a worker
uid and a control group where the judge is root), no mocks."""

import signal
import time
from pathlib import Path

import pytest
import torch

from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from autograder.sandbox.client import _signal_name
from conftest import limits

CODE = """
import os, signal, time
def double(x):
    return x * 2
def kill_with(x, n):
    os.kill(os.getpid(), n)
    time.sleep(1)
    return x
def default_then_kill(x, n):
    signal.signal(n, signal.SIG_DFL)  # Python ignores SIGXFSZ (and SIGPIPE) until told otherwise
    os.kill(os.getpid(), n)
    time.sleep(1)
    return x
def exit_with(x, n):
    os._exit(n)
def _fds():
    return [fd for fd in map(int, os.listdir('/proc/self/fd')) if fd > 2]
def close_pipes(x):
    for fd in _fds():
        try:
            os.close(fd)
        except OSError:
            pass
    return x
def close_pipes_and_spin(x):
    close_pipes(x)
    while True:
        time.sleep(0.01)
def flood_pipes(x):
    for fd in _fds():
        try:
            os.write(fd, b'garbage' * 10000)
        except OSError:
            pass
    return x
def job_control_stops(x):
    for s in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
        os.kill(os.getpid(), s)
    time.sleep(0.2)
    return x * 2
"""
LIMITS = dict(cpu_seconds_per_call=3, load_seconds=30, memory_mb=2048, output_bytes=1_000_000)


def _remote(cells, forkserver=None, labels=None, **overrides):
    sub = Submission(Path("inline.ipynb"), {}, [Cell(i, src, src, None, (labels or {}).get(i)) for i, src in cells])
    return Remote(sub, "", limits(**{**LIMITS, **overrides}), forkserver=forkserver)


@pytest.fixture(scope="module")
def remote(forkserver):
    r = _remote([(1, CODE)], forkserver)
    yield r
    r.close()


def _fails_alone(remote, target, args, wanted, seconds=8):
    """`target(*args)` fails with a reason holding each of `wanted` within `seconds`,
    again at once, and the next call (a fresh worker) works."""
    x = torch.arange(3.0)
    start = time.monotonic()
    first = remote.call(target, [x, *args])
    took = time.monotonic() - start
    assert not first.ok, first
    assert first.error.startswith(f"`{target}` ") and "\n" not in first.error, first.error
    for w in wanted:
        assert w in first.error, first.error
    assert took < seconds, (took, first.error)
    assert remote.call(target, [x, *args]).error == first.error  # the function stays dead
    assert torch.equal(remote.call("double", [x]).value, x * 2)  # the rest goes on
    remote.dead.pop(target)  # the module's remote is shared by the cases
    return first.error


@pytest.mark.parametrize(
    "n,wanted",
    [
        (40, ["crashed with signal 40"]),
        (int(signal.SIGRTMIN) + 2, [f"crashed with signal {int(signal.SIGRTMIN) + 2}"]),
        (63, ["crashed with signal 63"]),  # a number Python's signal module has no name for
        (int(signal.SIGSYS), [f"signal {int(signal.SIGSYS)} (SIGSYS)"]),
        (int(signal.SIGTERM), [f"signal {int(signal.SIGTERM)} (SIGTERM)"]),
    ],
)
def test_a_death_by_any_signal_fails_only_that_call(remote, n, wanted):
    error = _fails_alone(remote, "kill_with", [n], wanted)
    if _signal_name(n) is None:
        assert "(" not in error, error


def test_a_sigxcpu_the_code_sent_itself_is_not_called_the_cpu_limit(remote):
    error = _fails_alone(remote, "kill_with", [int(signal.SIGXCPU)], [f"signal {int(signal.SIGXCPU)} (SIGXCPU)"])
    assert "CPU time limit" not in error


def test_a_sigxfsz_the_code_sent_itself_is_not_called_the_output_limit(remote):
    error = _fails_alone(
        remote, "default_then_kill", [int(signal.SIGXFSZ)], [f"signal {int(signal.SIGXFSZ)} (SIGXFSZ)"]
    )
    assert "output limit" not in error


def test_a_stopped_worker_is_ended_at_once_not_at_the_wall_clock(remote):
    _fails_alone(
        remote,
        "kill_with",
        [int(signal.SIGSTOP)],
        [f"stopped the process that runs your code with signal {int(signal.SIGSTOP)} (SIGSTOP)"],
        seconds=4,
    )


def test_a_spawned_worker_that_is_stopped_is_ended_at_once_too():
    r = _remote([(1, CODE)])  # the judge's own child: waitid names the stop signal
    try:
        _fails_alone(r, "kill_with", [int(signal.SIGSTOP)], ["(SIGSTOP)"], seconds=4)
    finally:
        r.close()


def test_job_control_stops_are_discarded_in_the_workers_own_session(remote):
    # The worker leads a session of its own: its process group is orphaned, and
    # the kernel discards SIGTSTP, SIGTTIN and SIGTTOU there, so the call answers.
    x = torch.arange(3.0)
    reply = remote.call("job_control_stops", [x])
    assert reply.ok and torch.equal(reply.value, x * 2), reply


@pytest.mark.parametrize("code", [0, 3, 255])
def test_any_exit_status_fails_only_that_call(remote, code):
    _fails_alone(remote, "exit_with", [code], [f"exited early (exit status {code})"])


@pytest.mark.parametrize("target", ["close_pipes", "close_pipes_and_spin"])
def test_closing_the_workers_pipes_fails_only_that_call(remote, target):
    _fails_alone(remote, target, [], ["closed or wrote into the pipes between your code and the grader"])


def test_flooding_the_reply_pipe_with_garbage_fails_only_that_call(remote):
    _fails_alone(remote, "flood_pipes", [], ["the process that runs your code sent a"])


def test_cells_that_kill_or_cut_off_the_worker_at_load_are_skipped(forkserver):
    cells = [
        (2, CODE),
        (3, "import os\nos.kill(os.getpid(), 40)\n"),
        (4, "import os\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n    except OSError:\n        pass\n"),
        (5, "def triple(x):\n    return x * 3\n"),
    ]
    # as the reader labels cells: the prompt Jupyter shows and the first line
    r = _remote(cells, forkserver, labels={3: "[ ]: import os", 4: "[9]: import os"})
    try:
        x = torch.ones(2)
        assert torch.equal(r.call("triple", [x]).value, x * 3)
        assert r.cell_errors[:2] == [
            "The cell `[ ]: import os` was skipped: running it crashed with signal 40",
            "The cell `[9]: import os` was skipped: running it closed or wrote into the pipes between your code and "
            "the grader and was ended",
        ], r.cell_errors
    finally:
        r.close()


def test_a_cell_that_stops_the_worker_at_load_is_skipped_at_once(forkserver):
    cells = [
        (2, "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"),
        (3, "def triple(x):\n    return x * 3\n"),
    ]
    r = _remote(cells, forkserver)
    try:
        start = time.monotonic()
        assert r.call("triple", [torch.ones(2)]).ok
        assert time.monotonic() - start < 15
        assert r.cell_errors[0].startswith(
            "The cell 2 of the notebook was skipped: running it stopped the process that runs your code with signal 19"
        ), r.cell_errors
    finally:
        r.close()


def test_signal_names():
    assert _signal_name(19) == "SIGSTOP" and _signal_name(9) == "SIGKILL"
    assert _signal_name(40) is None and _signal_name(63) is None and _signal_name(999) is None

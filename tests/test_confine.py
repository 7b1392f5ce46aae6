"""The worker's confinement fails closed (autograder/sandbox/confine.py): a step the
kernel refuses ends the worker before any student code runs, and the judge names
the step as the grading machine's fault; a confined worker has no network."""

import errno
import os
from pathlib import Path

import pytest
import torch

from autograder.faults import KitFault, Unconfined
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from autograder.sandbox import confine
from autograder.sandbox.client import WorkerClient, WorkerDied
from conftest import limits

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and the uid drop need a root judge")
NOBODY = 65534

CODE = """
import os, socket
def double(x):
    return x * 2
def interfaces():
    with open("/proc/self/net/dev") as f:
        return f.read()
def reach_out():
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2).close()
        return "connected"
    except OSError as exc:
        return exc.errno
def exit_like_a_failed_step():
    os._exit(72)
"""


@pytest.fixture(params=["spawned", "forked"])
def started_by(request, forkserver):
    return forkserver if request.param == "forked" else None


def test_a_step_the_kernel_refuses_ends_the_worker_before_any_cell_runs(started_by, tmp_path):
    """setrlimit(RLIMIT_CPU) with a soft limit over the hard one (the load's budget over the
    submission's): the kernel answers EINVAL; the worker ends there, no cell ran, and the
    error is the grading machine's (`Unconfined`, a kit fault), never a death of the worker."""
    client = WorkerClient(limits(load_seconds=30, submission_cpu_seconds=5), started_by)
    client.start()
    try:
        cells = [{"index": 1, "source": f"open({str(tmp_path / 'ran')!r}, 'w').write('ran')\n"}]
        with pytest.raises(Unconfined) as unconfined:
            client.request({"op": "load", "cells": cells, "provided": ""}, cpu_seconds=30, wall_seconds=60)
        assert isinstance(unconfined.value, KitFault) and not isinstance(unconfined.value, WorkerDied)
        assert client.p.proc.returncode == confine.CONFINE_FAILED
        assert unconfined.value.step.startswith("setrlimit(RLIMIT_CPU) failed: EINVAL"), unconfined.value.step
        assert "the grading machine's fault" in str(unconfined.value)
        assert not client.alive
        assert client.read_scratch_int("progress") is None  # the worker notes each cell before it runs it
        report = (client.p.scratch / confine.REPORT).read_text()
        assert report.startswith("setrlimit(RLIMIT_CPU) failed: EINVAL"), report
    finally:
        client.close()
    assert not (tmp_path / "ran").exists()


def test_a_refused_unshare_ends_the_process_with_the_step_named(tmp_path):
    """unshare(CLONE_NEWNET) in a process without the capability (an unprivileged uid):
    EPERM, the process ends with CONFINE_FAILED and what comes after never runs."""
    marker = tmp_path / "ran"
    marker.touch()
    pid = os.fork()
    if pid == 0:
        try:
            report = confine.open_report(str(tmp_path))  # as the judge's uid, like the worker's first step
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            confine.fail_closed(report, confine.enter_network_namespace)
            with open(marker, "w") as f:  # the student's code, which must never run
                f.write("student code ran")
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == confine.CONFINE_FAILED
    assert confine.failure(str(tmp_path)) == "unshare(CLONE_NEWNET) failed: EPERM (Operation not permitted)"
    assert marker.read_text() == ""


def test_a_failed_libc_call_is_the_step_with_its_errno():
    libc = confine._libc()
    with pytest.raises(confine.StepFailed) as failed:
        confine.check("unshare(bad flags)", libc.unshare(-1))
    assert failed.value.err == errno.EINVAL
    assert failed.value.line() == "unshare(bad flags) failed: EINVAL (Invalid argument)"
    confine.check("getpid", 0)  # a zero return code is a step that passed


def test_no_report_is_a_failure_and_an_ok_is_not(tmp_path):
    assert confine.failure(str(tmp_path)) == "no report of the failed step"
    (tmp_path / confine.REPORT).write_text("ok\n")
    assert confine.failure(str(tmp_path)) is None


def _remote(started_by):
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, CODE, CODE)])
    return Remote(sub, "", limits(cpu_seconds_per_call=5, load_seconds=30), forkserver=started_by)


@ROOT_ONLY
def test_a_worker_has_no_network_interface_but_lo_and_no_route(started_by):
    r = _remote(started_by)
    try:
        reply = r.call("interfaces")
        assert reply.ok, reply.error
        names = sorted(line.split(":", 1)[0].strip() for line in reply.value.splitlines()[2:] if ":" in line)
        assert names == ["lo"], reply.value
        out = r.call("reach_out")
        assert out.ok and out.value in (errno.ENETUNREACH, errno.EHOSTUNREACH), out
    finally:
        r.close()


def test_a_student_exit_with_the_confinement_status_is_the_students(started_by):
    """A worker that got through its confinement wrote "ok": exiting 72 from student code
    is the student's own exit, never the grading machine's fault."""
    r = _remote(started_by)
    try:
        assert r.call("double", [torch.ones(2)]).ok
        reply = r.call("exit_like_a_failed_step")
        assert not reply.ok and "exit status 72" in reply.error and "sandbox" not in reply.error, reply.error
    finally:
        r.close()

"""The submission as the hidden suites see it: a proxy to the sandboxed worker.

Suites call `remote.call("masked_softmax", scores, mask)` and get a `Reply`
holding plain tensors rebuilt from bytes. The worker starts (and runs the
notebook's cells) on the first call. When it dies (crash, limit, timeout) the
function that was running is marked dead: its remaining tests fail at once
with the same reason, and the next call to any other function starts a fresh
worker.
"""
from dataclasses import dataclass, field

from autograder.sandbox.client import WorkerClient, WorkerDied

MAX_SKIPPED_CELLS = 2


@dataclass
class Reply:
    ok: bool
    value: object = None
    error: str | None = None  # one line for the student
    grads: dict | None = None
    op_count: int | None = None
    forbidden_seen: list = field(default_factory=list)
    inputs_after: list | None = None  # the input tensors as the call left them
    params: dict | None = None


def _error_line(err):
    if not isinstance(err, dict):
        return "the worker sent an error it could not describe"
    where = f" ({err['where']})" if err.get("where") else ""
    return f"raised {err.get('type', 'Exception')}{where}: {err.get('message', '')}"


class Remote:
    def __init__(self, submission, provided_source, limits, forkserver=None):
        self.submission = submission
        self.forkserver = forkserver
        self.provided_source = provided_source
        self.limits = limits
        self.client = None
        self.dead = {}  # target -> reason
        self.load_failure = None
        self.skipped = {}  # cell index -> why it was skipped (it killed the worker)
        self.cell_errors = []
        self.notes = {}  # target -> a submission-wide remark for the student
        self.peak_mb = None  # the largest worker peak (where a control group measured it)
        self._after_load = (None, None)  # (processes in its control group, Python threads) once loaded

    # -- lifecycle ------------------------------------------------------
    def _ensure(self):
        if self.load_failure:
            raise WorkerDied(self.load_failure)
        if self.client is not None and self.client.alive:
            return
        if self.client is not None:
            self.client.close()
        while True:
            self.client = WorkerClient(self.limits, self.forkserver)
            self.client.start()
            cells = [{"index": c.index, "source": c.source} for c in self.submission.cells
                     if c.index not in self.skipped]
            try:
                report = self.client.request(
                    {"op": "load", "cells": cells, "provided": self.provided_source},
                    cpu_seconds=self.limits.load_seconds,
                    wall_seconds=self.limits.load_seconds * 1.5 + 10,
                )
                break
            except WorkerDied as exc:
                # The worker notes each cell before running it: skip the one
                # that killed it and run the rest, so other questions keep
                # what they earned.
                culprit = self.client.read_scratch_int("progress")
                self.close()
                if culprit is None or culprit in self.skipped or len(self.skipped) >= MAX_SKIPPED_CELLS:
                    self.load_failure = f"running the notebook's cells {exc.reason}"
                    raise WorkerDied(self.load_failure) from None
                self.skipped[culprit] = exc.reason
        self._after_load = (self.client.processes(), report.get("py_threads"))
        self.cell_errors = [f"cell {i} was skipped: running it {why}" for i, why in self.skipped.items()] + [
            f"cell {c['index']} {_error_line(c.get('error'))}"
            for c in report.get("cells", []) if not c.get("ok")
        ]

    def public(self, tests):
        """Run otter's public tests (plain sources) beside the notebook's code:
        the self-check `grader.check_all()` gives. Raises WorkerDied."""
        self._ensure()
        budget = self.limits.cpu_seconds_per_call * max(len(tests), 1)
        reply = self.client.request({"op": "public", "tests": tests}, cpu_seconds=budget, wall_seconds=budget * 2 + 10)
        return reply.get("results", []) if isinstance(reply, dict) else []

    def close(self):
        if self.client is not None:
            self.client.close()
            if self.client.peak_mb is not None:
                self.peak_mb = max(self.peak_mb or 0.0, self.client.peak_mb)
            self.client = None

    def _retire_if_left_running(self, target, raw):
        """A call that leaves threads or processes behind (they could act while
        another function is graded) ends its worker once it has answered; the
        next call starts a fresh one. Processes are counted by the control
        group (the judge's own view); Python threads as the worker reports
        them (torch's and CUDA's native threads are not counted: they start on
        first use). A worker that under-reports only spares its own threads."""
        now = (self.client.processes(), raw.get("py_threads") if isinstance(raw, dict) else None)
        grew = [isinstance(a, int) and isinstance(b, int) and b > a for a, b in zip(self._after_load, now)]
        if any(grew):
            self.notes.setdefault(target, f"`{target}` left threads or processes running after it "
                                          "returned; they were stopped and its worker replaced")
            self.close()

    # -- calls ----------------------------------------------------------
    def call(self, target, *args, device="cpu", construct=None, state=None, to=None,
             cotangents=None, trace=False, return_inputs=False, invoke=True, **kwargs):
        if target in self.dead:
            return Reply(False, error=self.dead[target])
        try:
            self._ensure()
        except WorkerDied as exc:
            return Reply(False, error=exc.reason)
        message = {
            "op": "call", "target": target, "args": list(args), "kwargs": kwargs,
            "device": device, "construct": construct, "state": state, "to": to,
            "cotangents": cotangents, "trace": trace, "return_inputs": return_inputs,
            "invoke": invoke,
        }
        cpu = self.limits.cpu_seconds_per_call
        try:
            raw = self.client.request(message, cpu_seconds=cpu, wall_seconds=cpu * 2 + 10)
        except WorkerDied as exc:
            self.dead[target] = f"`{target}` {exc.reason}"
            self.close()
            return Reply(False, error=self.dead[target])
        self._retire_if_left_running(target, raw)
        if not isinstance(raw, dict):
            return Reply(False, error="the worker sent a reply that is not a dict")
        if not raw.get("ok"):
            return Reply(False, error=_error_line(raw.get("error")))
        return Reply(
            True,
            value=raw.get("value"),
            grads=raw.get("grads"),
            op_count=raw.get("op_count"),
            forbidden_seen=list(raw.get("forbidden_seen") or []),
            inputs_after=raw.get("inputs_after"),
            params=raw.get("params"),
        )

"""The submission as the hidden suites see it: a proxy to the sandboxed worker.

Suites call `remote.call("masked_softmax", scores, mask)` and get a `Reply`
holding plain tensors rebuilt from bytes. The worker starts (and runs the
notebook's cells) on the first call. When it dies (crash, limit, timeout) the
function that was running is marked dead: its remaining tests fail at once
with the same reason, and the next call to any other function starts a fresh
worker.
"""
import time
from dataclasses import dataclass, field

from autograder.judge.text import one_line
from autograder.messages import t
from autograder.sandbox.client import WorkerClient, WorkerDied

MAX_SKIPPED_CELLS = 2
MAX_CELL_ERRORS = 10


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


def where_text(where, labels=None):
    """`in dot_attention, line 3 of In [7]` from the worker's {"cell", "line", "function"}
    (checked here: the worker is untrusted); cells as the student sees them (`labels`)."""
    if isinstance(where, str):  # an older worker's words
        return one_line(where, 60)
    if not isinstance(where, dict) or type(where.get("cell")) is not int or type(where.get("line")) is not int:
        return None
    cell = cell_label((labels or {}).get(where["cell"]), where["cell"])
    fn = where.get("function")
    if isinstance(fn, str) and fn.isidentifier() and fn != "<module>":
        return t("where_function", function=one_line(fn, 40), line=where["line"], cell=cell)
    return t("where_line", line=where["line"], cell=cell)


def cell_label(label, index):
    """A cell as Jupyter shows it: the reader's "In [7]", or "#3" (its place among code cells)."""
    if isinstance(label, str) and label.startswith("#") and label[1:].isdigit():
        return t("code_cell", n=int(label[1:]))
    return label if isinstance(label, str) and label else t("cell_numbered", index=index)


def _error_line(err, labels=None):
    """One bounded line from the error the worker reported (student text:
    the type name, the place and the message are each cut and made inert)."""
    if not isinstance(err, dict):
        return t("undescribed_error")
    place = where_text(err.get("where"), labels)
    where = f" ({place})" if place else ""
    if err.get("type") == "OutputLimit" and type(err.get("cap")) is int:
        return t("output_limit_raised", where=where, bytes=err["cap"])
    return t("raised", type=one_line(err.get("type", "Exception"), 80), where=where,
             message=one_line(err.get("message", ""), 400))


class Remote:
    def __init__(self, submission, provided_source, limits, forkserver=None, stand_in=None):
        self.submission = submission
        self.stand_in = stand_in  # judge.stand_in.StandIn: graded functions the judge answers for (or None)
        # how the student sees each cell: its execution count (In [7]) or its place among code cells
        self.labels = {c.index: c.label for c in submission.cells if getattr(c, "label", None)}
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
        self.started = time.monotonic()  # the submission's wall-clock budget runs from here
        self.over_budget = None  # the reason, once the budget is spent

    def _label(self, index):
        label = self.labels.get(index)
        if not label:
            return t("cell_numbered", index=index)
        text = cell_label(label, index)
        # "the cell In [7]", but "code cell 3" alone (not "the cell code cell 3")
        return text if text != label else t("the_cell", label=text)

    def _remaining(self):
        """Seconds left of the submission's wall-clock budget (limits.submission_seconds)."""
        return self.limits.submission_seconds - (time.monotonic() - self.started)

    def _spent(self):
        """The one-line reason once the budget is spent (kept for the notes)."""
        self.over_budget = t("over_budget", seconds=f"{self.limits.submission_seconds:g}")
        return self.over_budget

    def _wall(self, seconds):
        """A request's wall-clock limit, cut to what is left of the submission's budget."""
        left = self._remaining()
        if left <= 0:
            raise WorkerDied(self._spent())
        return min(seconds, left)

    # -- lifecycle ------------------------------------------------------
    def _ensure(self):
        if self.load_failure:
            raise WorkerDied(self.load_failure)
        if self.client is not None and self.client.alive:
            return
        if self.client is not None:
            self.client.close()
        indices = {c.index for c in self.submission.cells}
        while True:
            wall = self._wall(self.limits.load_seconds * 1.5 + 10)
            self.client = WorkerClient(self.limits, self.forkserver)
            self.client.start()
            cells = [{"index": c.index, "source": c.source} for c in self.submission.cells
                     if c.index not in self.skipped]
            try:
                report = self.client.request(
                    {"op": "load", "cells": cells, "provided": self.provided_source},
                    cpu_seconds=self.limits.load_seconds, wall_seconds=wall)
                break
            except WorkerDied as exc:
                # The worker notes each cell before running it: skip the one
                # that killed it and run the rest, so other questions keep
                # what they earned.
                culprit = self.client.read_scratch_int("progress")
                self.close()
                if culprit not in indices or culprit in self.skipped or len(self.skipped) >= MAX_SKIPPED_CELLS:
                    self.load_failure = t("running_cells", reason=exc.reason)
                    raise WorkerDied(self.load_failure) from None
                self.skipped[culprit] = exc.reason
        report = report if isinstance(report, dict) else {}
        self._after_load = (self.client.processes(), report.get("py_threads"))
        failed = [c for c in report.get("cells", []) if isinstance(c, dict) and not c.get("ok")
                  and c.get("index") in indices] if isinstance(report.get("cells"), list) else []
        self.cell_errors = ([t("cell_skipped", cell=self._label(i), why=why) for i, why in self.skipped.items()]
                            + [f"{self._label(c['index'])} {_error_line(c.get('error'), self.labels)}"
                               for c in failed])[:MAX_CELL_ERRORS]

    def public(self, tests):
        """Run otter's public tests (plain sources) beside the notebook's code:
        the self-check `grader.check_all()` gives. Raises WorkerDied."""
        self._ensure()
        budget = self.limits.cpu_seconds_per_call * max(len(tests), 1)
        reply = self.client.request({"op": "public", "tests": tests}, cpu_seconds=budget,
                                    wall_seconds=self._wall(budget * 2 + 10))
        results = reply.get("results", []) if isinstance(reply, dict) else []
        return results if isinstance(results, list) else []

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
            self.notes.setdefault(target, t("left_running", target=target))
            self.close()

    # -- calls ----------------------------------------------------------
    def call(self, target, args=(), kwargs=None, *, device="cpu", construct=None, state=None, to=None,
             cotangents=None, trace=False, return_inputs=False, invoke=True, isolate=None, call_with=None,
             answer=None, cpu_seconds=None):
        """Call the student's `target(*args, **kwargs)` in the worker. The
        protocol's options are keyword-only and apart from the student's
        arguments, so a student parameter may be called `device` or `to`.
        `isolate` (names) narrows the graded functions the judge stands in for
        during this call (a provided driver that calls one graded function,
        `train_step`, with another, `masked_loss`, stood in for). `call_with`
        passes functions first (`[{"proxy": name} | {"own": name}]`, see
        `worker.runner`); `answer(message, count)` answers the proxies' callbacks
        (`judge.proxies.Recorder`). `cpu_seconds` replaces
        limits.cpu_seconds_per_call for this call (the training lab's run: its
        value is grading.yml's, never the student's)."""
        kwargs = dict(kwargs or {})
        if target in self.dead:
            return Reply(False, error=self.dead[target])
        try:
            self._ensure()
            budget = float(cpu_seconds or self.limits.cpu_seconds_per_call)
            wall = self._wall(budget * 2 + 10)
        except WorkerDied as exc:
            return Reply(False, error=exc.reason)
        message = {
            "op": "call", "target": target, "args": list(args), "kwargs": kwargs,
            "device": device, "construct": construct, "state": state, "to": to,
            "cotangents": cotangents, "trace": trace, "return_inputs": return_inputs,
            "invoke": invoke,
        }
        if call_with:
            message["call_with"] = list(call_with)
        proxied = {c["proxy"] for c in call_with or () if isinstance(c, dict) and "proxy" in c}
        on_callback = None
        allowed = []
        if self.stand_in is not None:
            allowed = self.stand_in.allowed(target)
            if isolate is not None:
                allowed = [n for n in allowed if n in isolate]
            message["isolate"] = allowed
        if self.stand_in is not None or (answer is not None and proxied):
            count = [0]

            def on_callback(msg):
                count[0] += 1
                if answer is not None and msg.get("name") in proxied:
                    return answer(msg, count[0])
                if self.stand_in is None:
                    return {"ok": False, "error": t("stand_in_refused")}
                return self.stand_in.answer(target, allowed, msg, count[0])
        try:
            raw = self.client.request(message, cpu_seconds=budget, wall_seconds=wall,
                                      on_callback=on_callback)
        except WorkerDied as exc:
            self.close()
            if self._remaining() <= 0:  # the budget ran out during this call: say so, not "timed out"
                return Reply(False, error=self._spent())
            self.dead[target] = t("function_died", target=target, reason=exc.reason)
            return Reply(False, error=self.dead[target])
        self._retire_if_left_running(target, raw)
        if not isinstance(raw, dict):
            return Reply(False, error="the worker sent a reply that is not a dict")
        if not raw.get("ok"):
            return Reply(False, error=_error_line(raw.get("error"), self.labels))
        seen = raw.get("forbidden_seen")
        return Reply(
            True,
            value=raw.get("value"),
            grads=raw.get("grads") if isinstance(raw.get("grads"), dict) else None,
            op_count=raw.get("op_count") if type(raw.get("op_count")) is int else None,
            forbidden_seen=[one_line(s, 80) for s in seen[:10]] if isinstance(seen, list) else [],
            inputs_after=raw.get("inputs_after"),
            params=raw.get("params") if isinstance(raw.get("params"), dict) else None,
        )

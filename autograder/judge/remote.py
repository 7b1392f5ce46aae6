"""The submission as the hidden suites see it: a proxy to the sandboxed worker.

Suites call `remote.call("masked_softmax", [scores], {"mask": mask})` and get a `Reply`
holding plain tensors rebuilt from bytes. The worker starts (and runs the
notebook's cells) on the first call. When it dies (crash, limit, timeout) the
function that was running is marked dead: its remaining tests fail at once
with the same reason, and the next call to any other function starts a fresh
worker. The protocol's options of a call (device, construction, cotangents,
stand-ins...) are one `CallOptions`, apart from the student's arguments.

Two kinds of call, kept apart here: a verdict call (`call`), whose answer can change
a score, and a probe (`probe`), a call the judge makes for itself to explain a failure
(the counterexample search, a likely cause's second look). A probe tells the student's
code that it failed (its inputs are recognisable, its very timing says so), so every
verdict call of the submission comes first: `end_verdicts` closes them, a probe before
it and a verdict call after it are the kit's own faults (`CallOrderError`), never a
quiet change of order. Probes then run in the same worker, which answers no verdict
again.

Whose fault a failure is: a worker that dies (`WorkerDied`) is the student's code's, and so
is what it raised (`Reply.error`). A worker that could not be confined (`faults.Unconfined`)
is the grading machine's: it leaves every call as it is (each later call raises it again,
without another try) and never becomes the notebook's load failure. An error of the judge's
own while the worker waits on it (answering a stand-in's callback) ends that worker and
leaves the call as it came: the kit's.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from autograder.faults import KitFault, Unconfined
from autograder.judge.form import ALLOWED, LABEL_CHARS
from autograder.messages import number, t
from autograder.sandbox import memcap
from autograder.sandbox.client import WorkerClient, WorkerDied
from autograder.sandbox.limits import Limits
from autograder.text import one_line

if TYPE_CHECKING:
    from autograder.judge.notebook import Submission
    from autograder.judge.stand_in import StandIn
    from autograder.judge.watch import Watch
    from autograder.sandbox.forkserver import ForkServer

MAX_SKIPPED_CELLS = 2
MAX_CELL_ERRORS = 10


class CallOrderError(RuntimeError):
    """A probe while verdict calls may still come, or a verdict call after a probe: a bug
    of the kit's suites (a probe's answer could reach a verdict), raised, never skipped."""


@dataclass
class Reply:
    ok: bool
    value: Any = None
    error: str | None = None  # one line for the student
    # the type's name of the exception the student's code raised, as the worker reported it
    # (bounded: `raised_type`), or None where the call raised none (it died, ran out of time or
    # printed past the output limit): what a check asks of an error, never read off `error`
    raised: str | None = None
    grads: dict[str, Any] | None = None
    op_count: int | None = None
    forbidden_seen: list[str] = field(default_factory=list)
    inputs_after: list[Any] | None = None  # the input tensors as the call left them
    params: dict[str, Any] | None = None
    # a built module's persistent buffers ({name: {"shape", "dtype", "device"}}): with `params`,
    # every entry of its state_dict, the names a load_state_dict matches
    buffers: dict[str, Any] | None = None


@dataclass(frozen=True)
class CallOptions:
    """The protocol's options of one `Remote.call`, apart from the student's arguments (so a
    student parameter may be called `device` or `to`).

    `construct` ({"args", "kwargs"}) builds the target (a class) first, `state` loads a
    state dict into it, `to` ({"dtype"}) moves it, and `invoke=False` stops there;
    `cotangents` asks for the gradients; `trace` counts the operations run;
    `return_inputs` sends the input tensors back as the call left them. `isolate`
    (names) narrows the graded functions the judge stands in for during this call (a
    provided driver that calls one graded function, `train_step`, with another,
    `masked_loss`, stood in for). `call_with` passes functions first
    (`[{"proxy": name} | {"own": name}]`, see `worker.runner`); `answer(message, count)`
    answers the proxies' callbacks (`judge.proxies.Recorder`). `cpu_seconds` replaces
    limits.cpu_seconds_per_call for this call (the training lab's run: its value is
    grading.yml's, never the student's).

    `memory_mb` caps the data this call may hold beyond a bare worker (`sandbox.memcap`: the
    kernel enforces it, the judge reads it back before the call's student code runs; an
    allocation past it fails in the worker, the student's error, worded with `reference_mb`,
    what the reference needs, where given); the worker is retired after the call. `watch`
    (`judge.watch.Watch`) stands the judge in for functions the student's code is supposed to
    call and logs each call it answers."""

    device: str = "cpu"
    construct: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    to: dict[str, Any] | None = None
    cotangents: list[Any] | None = None
    trace: bool = False
    return_inputs: bool = False
    invoke: bool = True
    isolate: Sequence[str] | None = None
    call_with: Sequence[dict[str, str]] | None = None
    answer: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
    cpu_seconds: float | None = None
    memory_mb: float | None = None
    reference_mb: float | None = None
    watch: "Watch | None" = None


PLAIN = CallOptions()  # a plain call: the target called on the CPU, nothing else asked


def where_text(where: object, labels: dict[int, str] | None = None) -> str | None:
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


def cell_label(label: object, index: int) -> str:
    """A cell as the student sees it: the reader's label (its prompt, `[7]:`, and its first
    line: `form.shown_label`), else its place in the notebook."""
    if isinstance(label, str) and label:
        return t("cell_shown", label=one_line(label, LABEL_CHARS))
    return t("cell_numbered", index=index)


def raised_type(err: object) -> str | None:
    """The type's name of the exception in the worker's error report (`_error_line` words
    it), bounded as it is shown; None where the report is no exception (the output limit) or
    no report at all."""
    if not isinstance(err, dict) or (err.get("type") == "OutputLimit" and type(err.get("cap")) is int):
        return None
    return one_line(err.get("type", "Exception"), 80)


def _error_line(err: object, labels: dict[int, str] | None = None) -> str:
    """One bounded line from the error the worker reported (student text:
    the type name, the place and the message are each cut and made inert)."""
    if not isinstance(err, dict):
        return t("undescribed_error")
    place = where_text(err.get("where"), labels)
    where = f" ({place})" if place else ""
    if err.get("type") == "OutputLimit" and type(err.get("cap")) is int:
        return t("output_limit_raised", where=where, bytes=err["cap"])
    return t(
        "raised",
        type=raised_type(err),
        where=where,
        message=one_line(err.get("message", ""), 400),
    )


class Remote:
    def __init__(
        self,
        submission: "Submission",
        provided_source: str,
        limits: Limits,
        forkserver: "ForkServer | None" = None,
        stand_in: "StandIn | None" = None,
    ) -> None:
        self.submission = submission
        self.stand_in = stand_in  # graded functions the judge answers for (or None)
        # how the student sees each cell: its prompt and first line (`form.shown_label`)
        self.labels: dict[int, str] = {c.index: label for c in submission.cells if (label := getattr(c, "label", None))}
        self.forkserver = forkserver
        self.provided_source = provided_source
        self.limits = limits
        self.client: WorkerClient | None = None
        self.dead: dict[str, str] = {}  # target -> reason
        self.load_failure: str | None = None
        self.unconfined: str | None = None  # the confinement step that failed (the machine's fault), once one did
        self.skipped: dict[int, str] = {}  # cell index -> why it was skipped (it killed the worker)
        self.cell_errors: list[str] = []
        self.notes: dict[str, str] = {}  # target -> a submission-wide remark for the student
        self.peak_mb: float | None = None  # the largest worker peak (where a control group measured it)
        # (processes in its control group, Python threads) once loaded
        self._after_load: tuple[object, object] = (None, None)
        self.started = time.monotonic()  # the submission's wall-clock budget runs from here
        self.over_budget: str | None = None  # the reason, once the budget is spent
        self.verdicts_open = True  # verdict calls may still come: no probe yet (`end_verdicts`)
        # a bare worker's (data bytes, control group bytes or None), read once for capped calls
        self._bare: tuple[int, int | None] | None = None

    def _label(self, index: int) -> str:
        return cell_label(self.labels.get(index), index)

    def _remaining(self) -> float:
        """Seconds left of the submission's wall-clock budget (limits.submission_seconds)."""
        return self.limits.submission_seconds - (time.monotonic() - self.started)

    def _spent(self) -> str:
        """The one-line reason once the budget is spent (kept for the notes)."""
        self.over_budget = reason = t("over_budget", seconds=number(self.limits.submission_seconds, "g"))
        return reason

    def _wall(self, seconds: float) -> float:
        """A request's wall-clock limit, cut to what is left of the submission's budget."""
        left = self._remaining()
        if left <= 0:
            raise WorkerDied(self._spent())
        return min(seconds, left)

    # -- lifecycle ------------------------------------------------------
    def _ensure(self) -> WorkerClient:
        """The worker, started (and the notebook's cells run) if it is not running. Raises
        WorkerDied (the notebook's), or Unconfined (the machine's: never the notebook's load failure)."""
        if self.unconfined is not None:
            raise Unconfined(self.unconfined)
        if self.load_failure:
            raise WorkerDied(self.load_failure)
        if self.client is not None and self.client.alive:
            return self.client
        if self.client is not None:
            self.client.close()
        indices = {c.index for c in self.submission.cells}
        while True:
            wall = self._wall(self.limits.load_seconds * 1.5 + 10)
            self.client = client = WorkerClient(self.limits, self.forkserver)
            client.start()
            cells = [
                {"index": c.index, "source": c.source} for c in self.submission.cells if c.index not in self.skipped
            ]
            try:
                report = client.request(
                    {"op": "load", "cells": cells, "provided": self.provided_source, "packages": list(ALLOWED)},
                    cpu_seconds=self.limits.load_seconds,
                    wall_seconds=wall,
                )
                break
            except Unconfined as exc:
                self.close()
                self.unconfined = exc.step
                raise
            except WorkerDied as exc:
                # The worker notes each cell before running it: skip the one
                # that killed it and run the rest, so other questions keep
                # what they earned.
                culprit = client.read_scratch_int("progress")
                self.close()
                if (
                    culprit is None
                    or culprit not in indices
                    or culprit in self.skipped
                    or len(self.skipped) >= MAX_SKIPPED_CELLS
                ):
                    self.load_failure = failure = t("running_cells", reason=exc.reason)
                    raise WorkerDied(failure) from None
                self.skipped[culprit] = exc.reason
        report = report if isinstance(report, dict) else {}
        self._after_load = (client.processes(), report.get("py_threads"))
        failed = (
            [
                c
                for c in report.get("cells", [])
                if isinstance(c, dict) and not c.get("ok") and c.get("index") in indices
            ]
            if isinstance(report.get("cells"), list)
            else []
        )
        self.cell_errors = (
            [t("cell_skipped", cell=self._label(i), why=why) for i, why in self.skipped.items()]
            + [f"{self._label(c['index'])} {_error_line(c.get('error'), self.labels)}" for c in failed]
        )[:MAX_CELL_ERRORS]
        return client

    def public(self, tests: list[Any]) -> list[Any]:
        """Run otter's public tests (plain sources) beside the notebook's code:
        the self-check `grader.check_all()` gives. Raises WorkerDied."""
        client = self._ensure()
        budget = self.limits.cpu_seconds_per_call * max(len(tests), 1)
        reply = client.request(
            {"op": "public", "tests": tests}, cpu_seconds=budget, wall_seconds=self._wall(budget * 2 + 10)
        )
        results = reply.get("results", []) if isinstance(reply, dict) else []
        return results if isinstance(results, list) else []

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            if self.client.peak_mb is not None:
                self.peak_mb = max(self.peak_mb or 0.0, self.client.peak_mb)
            self.client = None

    def _retire_if_left_running(self, target: str, client: WorkerClient, raw: object) -> None:
        """A call that leaves threads or processes behind (they could act while
        another function is graded) ends its worker once it has answered; the
        next call starts a fresh one. Processes are counted by the control
        group (the judge's own view); Python threads as the worker reports
        them (torch's and CUDA's native threads are not counted: they start on
        first use). A worker that under-reports only spares its own threads."""
        now = (client.processes(), raw.get("py_threads") if isinstance(raw, dict) else None)
        grew = [isinstance(a, int) and isinstance(b, int) and b > a for a, b in zip(self._after_load, now)]
        if any(grew):
            self.notes.setdefault(target, t("left_running", target=target))
            self.close()

    # -- memory caps ----------------------------------------------------
    def _cap(self, memory_mb: float) -> tuple[int, int | None]:
        """(the hard RLIMIT_DATA, the control group's limit or None) of a call capped at
        `memory_mb` beyond a bare worker (`sandbox.memcap`)."""
        if self._bare is None:  # one per fork server (every worker it forks starts the same), else per submission
            kept = getattr(self.forkserver, "bare_worker", None)
            self._bare = kept if kept is not None else self._measure_bare()
            if self.forkserver is not None:
                self.forkserver.bare_worker = self._bare
        data, group = self._bare
        group_limit = None if group is None else group + int((memory_mb + memcap.GROUP_SLACK_MB) * memcap.MB)
        return memcap.cap_bytes(data, memory_mb), group_limit

    def _measure_bare(self) -> tuple[int, int | None]:
        """A bare worker's data size and control-group charge, read from the kernel: one
        started for it (confined as every worker is), asked to run no cell, and closed. A
        worker the judge cannot measure is the kit's fault, never a cap quietly dropped."""
        client = WorkerClient(self.limits, self.forkserver)
        client.start()
        try:
            try:
                client.request({"op": "ready"}, cpu_seconds=self.limits.load_seconds, wall_seconds=self._wall(60.0))
            except WorkerDied as exc:
                raise KitFault(f"a bare worker for a memory cap did not start: {exc.reason}") from None
            data = memcap.data_bytes(client.pid) if client.pid is not None else None
            if data is None:
                raise KitFault("the worker's data size cannot be read from /proc: no memory cap can be held")
            return data, client.memory_charged()
        finally:
            client.close()

    def _hold(self, client: WorkerClient, cap: tuple[int, int | None]) -> str | None:
        """None where the kernel holds the call's cap on every process of the worker (read
        from /proc, never the worker's word) and, where a control group holds it, the group's
        limit is lowered: asked by the worker once it lowered its own, before the call runs.
        Else "lifted" (a process without it), or "full" (the group already holds more)."""
        pid = client.pid
        if pid is None:
            return "lifted"
        pids = client.group_pids()
        pids = memcap.descendants(pid) if pids is None else pids | {pid}
        if memcap.uncapped(pids, cap[0]):
            return "lifted"
        if cap[1] is not None and not client.lower_memory_limit(cap[1]):
            return "full"
        return None

    def _cap_line(self, o: CallOptions, error: str) -> str:
        mb = number(o.memory_mb or 0, "g")
        if o.reference_mb is None:
            return t("memory_cap_exceeded_alone", mb=mb, error=error)
        return t("memory_cap_exceeded", mb=mb, need=number(o.reference_mb, "g"), error=error)

    # -- calls ----------------------------------------------------------
    def end_verdicts(self) -> None:
        """Every verdict call of the submission is made: probes may run from here on."""
        self.verdicts_open = False

    def call(
        self, target: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None, options: CallOptions = PLAIN
    ) -> Reply:
        """Call the student's `target(*args, **kwargs)` in the worker, with the
        protocol's `options` (`CallOptions`): a verdict call, never after `end_verdicts`."""
        if not self.verdicts_open:
            raise CallOrderError(f"a verdict call of {target} after the probes began (Remote.end_verdicts)")
        return self._call(target, args, kwargs, options, 10.0)

    def call_fresh(
        self, target: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None, options: CallOptions = PLAIN
    ) -> Reply:
        """`call`, in a worker of its own: started and loaded (the notebook's cells run afresh)
        for this call alone, and closed after it. Nothing an earlier call left in a worker
        (globals, attributes, torch's RNG, files in its scratch) reaches it, and nothing it
        leaves reaches a later call; the shared worker, if one runs, is kept for the calls
        after it. For a call whose answer must not depend on the calls before it (the student's
        regression test, run once per function it is given)."""
        shared, after_load, cell_errors, load_failure = (
            self.client,
            self._after_load,
            self.cell_errors,
            self.load_failure,
        )
        self.client = None
        try:
            return self._call(target, args, kwargs, options, 10.0)
        finally:
            self.close()
            self.client, self._after_load, self.cell_errors = shared, after_load, cell_errors
            self.load_failure = load_failure  # a fresh load that failed answers this call only

    def probe(
        self,
        target: str,
        args: Sequence[Any],
        kwargs: dict[str, Any] | None = None,
        options: CallOptions = PLAIN,
        seconds: float | None = None,
    ) -> Reply:
        """A call the judge makes for itself, not a check (the counterexample search,
        `judge.counterexample`; a likely cause's second look): only once every verdict call
        is made (`end_verdicts`), at most `seconds` of CPU (the per-call budget where
        None) and twice that plus one of wall clock. A worker that dies in it is closed
        (the next probe starts a fresh one), and the function is not marked dead. None is
        made once half the submission's wall-clock budget is spent."""
        if self.verdicts_open:
            raise CallOrderError(f"a probe of {target} while verdict calls may still come (Remote.end_verdicts)")
        if seconds is None:
            seconds = float(self.limits.cpu_seconds_per_call)
        if self._remaining() < self.limits.submission_seconds / 2:
            return Reply(False, error=t("over_budget", seconds=number(self.limits.submission_seconds, "g")))
        was_dead = target in self.dead
        seconds = min(max(0.1, seconds), float(self.limits.cpu_seconds_per_call))
        reply = self._call(target, args, kwargs, replace(options, cpu_seconds=seconds), 1.0)
        if not was_dead:
            self.dead.pop(target, None)
        return reply

    def _call(
        self, target: str, args: Sequence[Any], kwargs: dict[str, Any] | None, options: CallOptions, slack: float
    ) -> Reply:
        kwargs = dict(kwargs or {})
        if options.watch is not None:
            options.watch.check(target, self.stand_in)  # never the part being graded: the suite's bug otherwise
        if target in self.dead:
            return Reply(False, error=self.dead[target])
        try:
            client = self._ensure()
            budget = float(options.cpu_seconds or self.limits.cpu_seconds_per_call)
            wall = self._wall(budget * 2 + slack)
        except WorkerDied as exc:
            return Reply(False, error=exc.reason)
        o = options
        cap = self._cap(o.memory_mb) if o.memory_mb is not None else None
        message: dict[str, Any] = {
            "op": "call",
            "target": target,
            "args": list(args),
            "kwargs": kwargs,
            "device": o.device,
            "construct": o.construct,
            "state": o.state,
            "to": o.to,
            "cotangents": o.cotangents,
            "trace": o.trace,
            "return_inputs": o.return_inputs,
            "invoke": o.invoke,
        }
        if o.call_with:
            message["call_with"] = list(o.call_with)
        watch = o.watch
        if watch is not None:
            message["watch"] = watch.names
            if not watch.max_bytes:  # no answer larger than what the judge reads from a worker
                watch.max_bytes = int(self.limits.reply_bytes)
        if cap is not None:
            message["data_limit"] = cap[0]
        proxied = {c["proxy"] for c in o.call_with or () if isinstance(c, dict) and "proxy" in c}
        on_callback: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        allowed: list[str] = []
        stand_in, answer = self.stand_in, o.answer
        if stand_in is not None:
            allowed = stand_in.allowed(target)
            if o.isolate is not None:
                allowed = [n for n in allowed if n in o.isolate]
            if watch is not None:  # a watched name is answered by the suite's function, never twice
                allowed = [n for n in allowed if n not in watch.answers]
            message["isolate"] = allowed
            message["stand_in_classes"] = [n for n in allowed if n in stand_in.classes]
        held = [False]  # the judge read the cap back from the kernel (`_hold`)
        why: list[str | None] = [None]  # else why not: "lifted", or "full" (the group holds more already)
        if stand_in is not None or (answer is not None and proxied) or watch is not None or cap is not None:
            count = [0]

            def on_callback(msg: dict[str, Any]) -> dict[str, Any]:
                if msg.get("kind") == "memory_cap" and "name" not in msg:
                    if cap is None or held[0]:
                        return {"ok": False, "error": t("stand_in_refused")}
                    why[0] = self._hold(client, cap)
                    held[0] = why[0] is None
                    return {"ok": held[0], "error": why[0]}
                count[0] += 1
                if watch is not None and msg.get("name") in watch.answers:
                    return watch.answer(msg, count[0])
                if answer is not None and msg.get("name") in proxied:
                    return answer(msg, count[0])
                if stand_in is None:
                    return {"ok": False, "error": t("stand_in_refused")}
                return stand_in.answer(target, allowed, msg, count[0])

        try:
            raw = client.request(message, cpu_seconds=budget, wall_seconds=wall, on_callback=on_callback)
        except WorkerDied as exc:
            killed = cap is not None and held[0] and client.oom_killed()
            self.close()
            if self._remaining() <= 0:  # the budget ran out during this call: say so, not "timed out"
                return Reply(False, error=self._spent())
            if killed:  # past the call's own cap: this call's failure, the next one starts a fresh worker
                return Reply(False, error=self._cap_line(o, t("memory_cap_killed")), raised="MemoryError")
            self.dead[target] = t("function_died", target=target, reason=exc.reason)
            return Reply(False, error=self.dead[target])
        except BaseException:  # the judge's own (a callback's answer), or an interrupt: the kit's, as it came
            self.close()  # the worker waits on an answer that will not come
            raise
        if cap is not None:
            self.close()  # its hard limit stays lowered: the next call starts a fresh worker
            if why[0] == "full":  # what the notebook holds already is past the cap
                return Reply(False, error=self._cap_line(o, t("memory_cap_full")), raised="MemoryError")
            if not held[0]:  # it answered without the cap read back: the student's code went around it
                return Reply(False, error=t("memory_cap_not_held", mb=number(o.memory_mb or 0, "g")))
        else:
            self._retire_if_left_running(target, client, raw)
        if not isinstance(raw, dict):
            return Reply(False, error=t("reply_not_a_dict"))
        if not raw.get("ok"):
            err = raw.get("error")
            line = _error_line(err, self.labels)
            if cap is not None and isinstance(err, dict):
                if err.get("type") == "MemoryError" or err.get("out_of_memory") is True:
                    line = self._cap_line(o, line)
            return Reply(False, error=line, raised=raised_type(err))
        seen = raw.get("forbidden_seen")
        return Reply(
            True,
            value=raw.get("value"),
            grads=raw.get("grads") if isinstance(raw.get("grads"), dict) else None,
            op_count=raw.get("op_count") if type(raw.get("op_count")) is int else None,
            forbidden_seen=[one_line(s, 80) for s in seen[:10]] if isinstance(seen, list) else [],
            inputs_after=raw.get("inputs_after"),
            params=raw.get("params") if isinstance(raw.get("params"), dict) else None,
            buffers=raw.get("buffers") if isinstance(raw.get("buffers"), dict) else None,
        )

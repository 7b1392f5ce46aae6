"""Functions handed to a student's code as arguments, answered by the judge.

A question whose answer is a test (the student's regression test,
`test(attention)`) is graded by calling it in
the worker with `attention` a stand-in: the worker's `_proxy` sends each call's
tensors to the judge (a callback, plain data both ways), and a `Recorder`
answers it here with a trusted function (the reference, or a broken variant
whose code stays in the judge) and keeps the inputs it was sent. The worker
sees one opaque name for every stand-in, so the test cannot tell which
function answers it, except from the answers.

`exposes(...)` then decides, from those plain inputs alone, whether the test
asked anything that tells the variant from the reference: on some call the
reference runs and the variant *answers* (it does not raise) with outputs of
another number, shape or value (beyond the dtype's tolerance). A variant that
raises exposes nothing: a crash shows in any call, and a test with no
assertion would "catch" it. A "failed" from the worker counts only when the
test failed on its own assertion (`failed_by_assertion`: an AssertionError,
not an error of the call or of code that could not use its outputs), after a
call the variant answered (`Recorder.last_raised` false), on inputs that
expose it; and only while the test passes on the reference: a test that
always fails, or that fails because it spotted the stand-in, earns nothing.

What remains open (a known gap): the judge sees *what* the test asked, not
*why* its assertion failed. A test that asks discriminating questions and then
fails for another reason (say, on a value it compares against a hard-coded
number that the variant happens to miss) counts as a catch; and a test that
fails at random fails its run against the reference only by chance.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from autograder.faults import Refused, contract
from autograder.judge.stand_in import MAX_CALLBACKS, _backward, _detached, _output_bytes
from autograder.messages import t

NAME = "attention"  # what every stand-in is called in the worker
MAX_RECORDED = 32  # calls whose inputs are kept for `exposes` (a test makes a few)


class Recorder:
    """Answers one worker call's callbacks with `fn` and records their inputs."""

    def __init__(self, fn: Callable[..., Any], max_bytes: int | None = 0) -> None:
        self.fn = fn
        self.max_bytes = int(max_bytes or 0)
        self.calls: list[tuple[list[Any], dict[str, Any]]] = []  # [(args, kwargs)] as sent: plain tensors and values
        self.last_raised = False  # whether the last callback (forward or backward) was answered with an error

    def __call__(self, message: dict[str, Any], count: int) -> dict[str, Any]:
        reply = self._answer(message, count)
        self.last_raised = not reply.get("ok")
        return reply

    def _answer(self, message: dict[str, Any], count: int) -> dict[str, Any]:
        if count > MAX_CALLBACKS:
            return {"ok": False, "error": t("stand_in_flood", n=MAX_CALLBACKS)}
        args, kwargs = message.get("args"), message.get("kwargs")
        if not isinstance(args, list) or not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            return {"ok": False, "error": t("stand_in_refused")}
        grads_out = message.get("grad_outputs")
        if grads_out is None and len(self.calls) < MAX_RECORDED:  # a backward pass repeats its forward's inputs
            self.calls.append((args, kwargs))
        try:
            size = _output_bytes(self.fn, args, kwargs)  # on the meta device: shapes, no memory
            if self.max_bytes and size > self.max_bytes:
                return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
            if grads_out is not None:  # a test that checks gradients: the function's own, at its inputs
                return {"ok": True, "grads": _backward(self.fn, args, kwargs, grads_out)}
            with torch.no_grad(), contract(args, kwargs):
                value = self.fn(*args, **kwargs)
            return {"ok": True, "value": _detached(value)}
        except (
            Refused
        ) as exc:  # what the function raises on the test's inputs is the answer; any other error is the kit's
            return {"ok": False, "error": exc.line()}


ASSERTION = "AssertionError"


def failed_by_assertion(reply: object) -> bool:
    """Whether a failed call (`Remote.call`'s Reply) says the test raised an AssertionError:
    its own `assert`, `raise AssertionError(...)`, numpy's or torch's testing helpers, from the
    type the worker reported (`Reply.raised`), never from the words of the error's line. Any
    other error (the call raised, the test's code could not use what came back, a time-out) is
    no catch."""
    return getattr(reply, "raised", None) == ASSERTION


def _outputs(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def differs(got: Any, want: Any, tolerances: Mapping[str, Any], values: bool = True) -> bool:
    """Whether outputs `got` differ from `want` in number, shape or (with `values`) value,
    within the tolerance of their dtype (grading.yml `tolerances`)."""
    got, want = _outputs(got), _outputs(want)
    if len(got) != len(want):
        return True
    for g, w in zip(got, want):
        if not (isinstance(g, torch.Tensor) and isinstance(w, torch.Tensor)) or tuple(g.shape) != tuple(w.shape):
            return True
        if not values or g.device.type == "meta" or w.device.type == "meta":
            continue
        tol = tolerances.get(str(w.dtype).replace("torch.", ""), tolerances.get("float32"))
        if not torch.allclose(g.double(), w.double(), atol=tol["atol"], rtol=tol["rtol"], equal_nan=True):
            return True
    return False


def exposes(
    calls: Iterable[tuple[Sequence[Any], Mapping[str, Any]]],
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    tolerances: Mapping[str, Any],
    values: bool = True,
    raising: bool = False,
) -> bool:
    """Whether any recorded call's inputs tell `fn` from `reference`: the reference
    runs on them (the inputs are the contract's) and `fn` answers otherwise (`values`
    False: otherwise in number or shape only). A call where `fn` raises tells it apart
    only with `raising` (a crash shows whether the test looks at the outputs or not)."""
    for args, kwargs in calls:
        with torch.no_grad():
            try:
                with contract(args, kwargs):
                    want = reference(*args, **kwargs)
            except Refused:  # inputs outside the contract tell nothing
                continue
            try:
                with contract(args, kwargs):
                    got = fn(*args, **kwargs)
            except Refused:  # the variant fails where a correct function does not
                if raising:
                    return True
                continue
        if differs(got, want, tolerances, values):
            return True
    return False

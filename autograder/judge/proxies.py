"""Functions handed to a student's code as arguments, answered by the judge.

A question whose answer is a test (classic_attention's `test_attention_shapes`:
the student's regression test, `test(attention)`) is graded by calling it in
the worker with `attention` a stand-in: the worker's `_proxy` sends each call's
tensors to the judge (a callback, plain data both ways), and a `Recorder`
answers it here with a trusted function (the reference, or a broken variant
whose code stays in the judge) and keeps the inputs it was sent. The worker
sees one opaque name for every stand-in, so the test cannot tell which
function answers it, except from the answers.

`exposes(...)` then decides, from those plain inputs alone, whether the test
asked anything that tells the variant from the reference: the variant raises
where the reference does not, or returns outputs of another number, shape or
value (beyond the dtype's tolerance). A "failed" from the worker counts only
when it did: a test that always fails, or that fails because it spotted the
stand-in, earns nothing (its run against the reference fails too).

What remains open (a known gap): the judge sees *what* the test asked, not
*why* it failed. A test that asks discriminating questions and then fails for
another reason (say, on a value it compares against a hard-coded number that
the variant happens to miss) counts as a catch; and a test that fails at
random fails its run against the reference only by chance.
"""
import torch

from autograder.judge.stand_in import MAX_CALLBACKS, _backward, _detached, _output_bytes
from autograder.judge.text import one_line
from autograder.messages import t

NAME = "attention"  # what every stand-in is called in the worker
MAX_RECORDED = 32  # calls whose inputs are kept for `exposes` (a test makes a few)


class Recorder:
    """Answers one worker call's callbacks with `fn` and records their inputs."""

    def __init__(self, fn, max_bytes=0):
        self.fn = fn
        self.max_bytes = int(max_bytes or 0)
        self.calls = []  # [(args, kwargs)] as sent: plain tensors and values

    def __call__(self, message, count):
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
            with torch.no_grad():
                value = self.fn(*args, **kwargs)
            return {"ok": True, "value": _detached(value)}
        except Exception as exc:  # noqa: BLE001 - what the function raises on the test's inputs is the answer
            return {"ok": False, "error": one_line(f"{type(exc).__name__}: {exc}", 300)}


def _outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def differs(got, want, tolerances, values=True):
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


def exposes(calls, fn, reference, tolerances, values=True):
    """Whether any recorded call's inputs tell `fn` from `reference`: the reference
    runs on them (the inputs are the contract's) and `fn` raises or answers otherwise
    (`values` False: otherwise in number or shape only)."""
    for args, kwargs in calls:
        with torch.no_grad():
            try:
                want = reference(*args, **kwargs)
            except Exception:  # noqa: BLE001 - inputs outside the contract tell nothing
                continue
            try:
                got = fn(*args, **kwargs)
            except Exception:  # noqa: BLE001 - the variant fails where a correct function does not
                return True
        if differs(got, want, tolerances, values):
            return True
    return False

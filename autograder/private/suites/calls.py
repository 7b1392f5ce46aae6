"""Calling the student's code through the worker, and the reference here: a call described
by its shapes (never its values), the error a call raised with its likely cause, the
reply split into named tensors, the reference's outputs in float64 on the CPU.
"""

import torch

from autograder.judge.failure import Failure, Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.suites import causes, failing, tensors
from autograder.protocol import wire


def raised(reply, type_name):
    """Whether the call's `reply` reports a `type_name` raised by the student's code: the type
    the worker reported (`Reply.raised`), never a prefix of the line that words it."""
    return reply.raised == type_name


def describe_call(name, args, kwargs=None):
    """`masked_softmax(scores (2, 3) float64, mask (2, 3) bool)`: shapes, never values."""

    def d(v):
        if isinstance(v, torch.Tensor):
            return f"{tuple(v.shape)} {wire.dtype_name(v.dtype)}"
        if isinstance(v, (int, float, bool, str)) or v is None:
            return repr(v)
        return type(v).__name__

    parts = [d(a) for a in args] + [f"{k}={d(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


# Why the worker computed no gradients, in its own terms: a catalog key and its integer
# fields (never words to match): the keys it may send, each with its fields' names.
WORKER_GRAD_ERRORS = {"grads_not_connected": (), "grads_output_count": ("n", "got")}


def grads_error(grads):
    """Why a reply's gradients (`Reply.grads`) did not come, in the language in force, or None
    where they came: the worker's own reasons said from the catalog (`WORKER_GRAD_ERRORS`),
    an error torch raised in the student's code as its line, anything else unreadable."""
    if "error_key" in grads:
        key, fields = grads.get("error_key"), grads.get("fields")
        names = WORKER_GRAD_ERRORS.get(key) if isinstance(key, str) else None
        if (
            names is None
            or not isinstance(fields, dict)
            or sorted(fields) != sorted(names)
            or not all(type(v) is int for v in fields.values())
        ):
            return t("grads_unreadable")
        return t(key, **fields)
    if "error" in grads:
        error = grads["error"]
        return error if isinstance(error, str) else t("grads_unreadable")
    return None


def grads_hint(grads):
    """The likely cause torch's own error names (`causes.error_hint`), None for the worker's reasons."""
    error = grads.get("error")
    return causes.error_hint(error) if isinstance(error, str) else None


def with_cause(error, cause=None, frame=None):
    """The worker's error line with a likely cause when one is known: a `Said` for `fail`, or
    the line alone. `frame(line)`: the symptom that holds the line at its end (the call it
    answers before it: `after(what)`)."""
    error = error.rstrip()
    cause = cause if cause is not None else causes.error_hint(error)
    frame = frame or (lambda line: line)
    if cause is None:
        return frame(error)
    return failing.caused(frame(error if error.endswith((".", "!", "?", ":")) else f"{error}."), cause)


def after(what):
    """A `with_cause` frame: the error line after `what` (the call it answers)."""
    return lambda line: f"{what} {line}"


def gradients_of(what):
    """A `with_cause` frame: the worker's error about the gradients of `what`."""
    return lambda line: t("gradients_of", what=what, error=line)


def call(sub, name, args, kwargs=None, **opts):
    """Call the student's `name`; fail with its error unless it returned."""
    reply = sub.call(name, args, kwargs, CallOptions(**opts))
    if not reply.ok:
        call_failed(describe_call(name, args, kwargs), reply.error, raised=reply.raised)
    return reply


def call_failed(what, error, cause=None, hint=True, raised=None):
    """Fail with the error a call of the student's code raised: `what` (the call), then the
    error with its likely cause (`cause`, a `Msg`, else one known for the error where `hint`).
    The failure's kind is the error, whatever the inputs: the checks that hit it are one line
    of the feedback (`scoring`), not one per input. `raised`: the exception's type, where the
    call raised one (`Reply.raised`: what `explain_errors` asks of the failure)."""
    error = error.rstrip()
    said = with_cause(error, cause, after(what)) if hint or cause is not None else after(what)(error)
    try:
        failing.fail(said)
    except Failure as exc:
        exc.kind = error  # read by the judge's KitPlugin
        exc.raised = raised
        raise


def outputs(value, what, out_names):
    """Split a return value into named tensors: one tensor, or a tuple of them."""
    if len(out_names) == 1:
        return {out_names[0]: tensor(value, f"{what}")}
    if not isinstance(value, (tuple, list)) or len(value) != len(out_names):
        got = (
            t("kind_sequence", type=type(value).__name__, n=len(value))
            if isinstance(value, (tuple, list))
            else _kind(value)
        )
        failing.fail(t("returned_not_tuple", what=what, got=got, names=", ".join(out_names)))
    return {n: tensor(v, f"{what} -> {n}") for n, v in zip(out_names, value)}


def _kind(v):
    if isinstance(v, wire.Other):
        return t("kind_object", type=v.type_name)
    return "None" if v is None else t("kind_object", type=type(v).__name__)


def tensor(value, what):
    if not isinstance(value, torch.Tensor):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)  # as the wire brings a Python number
        failing.fail(
            failing.caused(
                t("not_a_tensor", what=what, got=_kind(value)), Msg("cause_python_number") if number else None
            )
        )
    return value


def reference_outputs(ref_fn, args, kwargs, out_names):
    """The reference's outputs in float64 on the CPU, as a dict by name."""
    with torch.no_grad():
        value = ref_fn(*tensors.to(args, "cpu", torch.float64), **tensors.to(kwargs or {}, "cpu", torch.float64))
    if len(out_names) == 1:
        return {out_names[0]: value}
    return dict(zip(out_names, value))

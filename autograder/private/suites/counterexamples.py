"""The glue from a failed value check to the one shrinking engine (`autograder.judge.shrink`):
the smallest input (of a function, a module or a gradient) where the student's code and
the reference differ, searched as a second look and shown as feedback lines.
"""

import contextlib

import pytest
import torch

from autograder.judge import counterexample, shrink
from autograder.judge.remote import CallOptions
from autograder.private.suites import calls, compare, tensors
from autograder.protocol import wire
from autograder.protocol.grads import vjp

# Options of a call that make it more than a function of its arguments (a module built
# and loaded, functions passed in, gradients asked): no function counterexample is searched
# for (a module's values checks search with `module_counterexample_on_failure`).
_NOT_A_PLAIN_CALL = ("construct", "state", "to", "call_with", "answer", "cotangents", "trace", "return_inputs")


@contextlib.contextmanager
def counterexample_on_failure(sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts):
    """Inside: a failed value check of a function (`got`: outputs of the reference's shapes
    and of `dtype`, whose values differ from `expected`) carries the smallest input found
    where the student's function and the reference differ (`autograder.judge.counterexample`),
    as the feedback lines its exception holds (`counterexample`); at most one per question.
    The search is a second look: the exception holds it, and the judge runs it once every
    verdict call of the submission is made (`KitPlugin.second_looks`)."""
    try:
        yield
    except pytest.fail.Exception as exc:
        if _values_differ(got, expected, dtype, cfg) and not hasattr(exc, "counterexample"):
            out_names = list(expected)
            exc.counterexample = lambda: _counterexample(
                sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, opts
            )
        raise


def _values_differ(got, expected, dtype, cfg):
    """Outputs of the reference's names, shapes and `dtype` whose values are not close enough:
    a failure a counterexample can show (not a wrong shape, dtype, a missing output or one
    without values: on the meta device)."""
    return all(
        n in got and got[n].shape == e.shape and got[n].dtype == dtype and got[n].is_meta == e.is_meta
        for n, e in expected.items()
    ) and not compare.close_enough(got, expected, cfg)


def _counterexample(sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, opts):
    """The feedback lines of a counterexample for a failed value check of `name`, or None."""
    probe = getattr(sub, "probe", None)
    if probe is None or str(device) != "cpu" or any(opts.get(k) for k in _NOT_A_PLAIN_CALL):
        return None
    limits = shrink.budget(cfg)
    spent = shrink.ledger(sub, name)
    if spent.spent(limits):
        return None
    options = CallOptions(**opts)

    def student(a, k, seconds):
        return _as_outputs(
            probe(name, tensors.to(a, device, dtype), tensors.to(k, device, dtype), options, seconds), out_names, dtype
        )

    def reference(a, k):  # on the inputs as the student's function gets them (rounded to `dtype`)
        out = shrink.refusing(
            calls.reference_outputs, ref_fn, tensors.to(a, "cpu", dtype), tensors.to(k, "cpu", dtype), out_names
        )
        return out if all(isinstance(v, torch.Tensor) for v in out.values()) else None

    found = shrink.search_function(
        name, list(args), dict(kwargs or {}), student, reference, compare.differs_beyond(cfg, dtype), limits, spent
    )
    if found is None:
        return None
    if dtype != torch.float64:  # shown as the student's function got them
        found.args, found.kwargs = tensors.to(found.args, "cpu", dtype), tensors.to(found.kwargs, "cpu", dtype)
    arg_names = counterexample.parameter_names(ref_fn, len(found.args))
    lower = wire.dtype_name(dtype) if dtype != torch.float64 else ""
    return counterexample.render(name, arg_names, found, limits, dtype=lower)


@contextlib.contextmanager
def module_counterexample_on_failure(sub, cfg, name, got, expected, dtype, device, sizes, make, sent=()):
    """`counterexample_on_failure` for a module `name` (a class the worker builds and loads
    parameters into): the smallest case found from the failing case's named `sizes`, each
    made fresh by `make(sizes, seed)` (a `shrink.ModuleCase`, or None); `sent`: the
    failing case's tensors (inputs, parameters), never shown again."""
    try:
        yield
    except pytest.fail.Exception as exc:
        if _values_differ(got, expected, dtype, cfg) and not hasattr(exc, "counterexample") and str(device) == "cpu":
            exc.counterexample = lambda: _module_counterexample(sub, cfg, name, expected, dtype, sizes, make, sent)
        raise


def _module_counterexample(sub, cfg, name, expected, dtype, sizes, make, sent):
    """The feedback lines of a counterexample for a failed value check of a module `name`, or None."""
    probe = getattr(sub, "probe", None)
    spent = shrink.ledger(sub, name)
    limits = shrink.budget(cfg)
    if probe is None or spent.spent(limits):
        return None
    out_names = list(expected)
    wire_dtype = wire.dtype_name(dtype)

    def student(case, seconds):
        options = CallOptions(
            construct=case.construct, state=tensors.to(case.state, dtype=dtype), to={"dtype": wire_dtype}
        )
        reply = probe(
            name, tensors.to(case.args, "cpu", dtype), tensors.to(case.kwargs, "cpu", dtype), options, seconds
        )
        return _as_outputs(reply, out_names, dtype)

    found = shrink.search_module(
        name,
        dict(sizes),
        lambda at, seed: _rounded(make(at, seed), dtype),
        student,
        out_names,
        compare.differs_beyond(cfg, dtype),
        limits,
        spent,
        [*sent, *expected.values()],
    )
    return None if found is None else counterexample.render_module(found, limits)


def _rounded(case, dtype):
    """A module case whose reference sees what the student's module holds in `dtype`
    (its parameters and float inputs rounded to it first)."""
    if case is None or dtype == torch.float64:
        return case
    reference = case.reference

    def rounded(state, args, kwargs):
        return reference(
            *(tensors.to(tensors.to(v, "cpu", dtype), "cpu", torch.float64) for v in (state, args, kwargs))
        )

    case.reference = rounded
    return case


def _as_outputs(reply, out_names, dtype):
    """A probe's reply as outputs by name: None unless tensors of `dtype` with values (not on
    the meta device), one per name."""
    if not reply.ok:
        return None
    value = reply.value
    if len(out_names) == 1:
        value = [value]
    if not isinstance(value, (list, tuple)) or len(value) != len(out_names):
        return None
    if not all(isinstance(v, torch.Tensor) and v.dtype == dtype and not v.is_meta for v in value):
        return None
    return dict(zip(out_names, value))


def _gradient_counterexample(sub, cfg, name, args, kwargs, ref_fn, out_names, grad_args, opts):
    """The feedback lines of a gradient counterexample for a function `name` whose outputs
    are right and whose gradients are not (float64, on the CPU), or None: the smallest
    input found where the gradients of the sum of every output (cotangents of ones, so
    that a student can redo it with `sum().backward()`) w.r.t. the inputs `grad_args`
    differ from the reference's (`shrink.search_function`, the question's budget)."""
    probe = getattr(sub, "probe", None)
    if probe is None or any(opts.get(k) for k in _NOT_A_PLAIN_CALL):
        return None
    limits = shrink.budget(cfg)
    spent = shrink.ledger(sub, name)
    if spent.spent(limits):
        return None
    arg_names = counterexample.parameter_names(ref_fn, len(args))
    grad_names = [arg_names[i] for i in grad_args]

    def leaves(a):
        return [
            x.detach().clone().requires_grad_(i in grad_args) if isinstance(x, torch.Tensor) else x
            for i, x in enumerate(a)
        ]

    def ones_for(a, k):  # the cotangents: ones of the reference's output shapes
        with torch.no_grad():
            out = ref_fn(*a, **k)
        return [torch.ones_like(o) for o in ([out] if len(out_names) == 1 else out)]

    def reference(a, k):
        r = leaves(a)
        out = shrink.refusing(ref_fn, *r, **k)
        outs = [out] if len(out_names) == 1 else list(out)
        grads = vjp(outs, [r[i] for i in grad_args], [torch.ones_like(o) for o in outs])
        return {n: g if g is not None else torch.zeros_like(r[i]) for n, i, g in zip(grad_names, grad_args, grads)}

    def student(a, k, seconds):
        options = CallOptions(**opts, cotangents=ones_for(a, k))
        reply = probe(name, leaves(a), k, options, seconds)
        grads = (reply.grads or {}) if reply.ok else {"error": True}
        got = grads.get("inputs") or []
        if calls.grads_error(grads) is not None or len(got) != len(grad_args):
            return None
        if not all(isinstance(g, torch.Tensor) and g.dtype == torch.float64 for g in got):
            return None
        return dict(zip(grad_names, got))

    found = shrink.search_function(
        name,
        list(args),
        dict(kwargs or {}),
        student,
        reference,
        compare.differs_beyond(cfg, torch.float64),
        limits,
        spent,
    )
    if found is None:
        return None
    return counterexample.render(name, arg_names, found, limits, kind="gradient")

"""Gradient checks: the student's gradients against the reference's (vector-Jacobian
products with the same cotangents), and gradients that stay finite.
"""

import torch

from autograder.judge.failure import Failure, Msg
from autograder.messages import t
from autograder.private.suites import calls, causes, counterexamples, failing, tensors, value_checks
from autograder.protocol.grads import vjp


def check_grads(
    sub, cfg, name, args, kwargs, ref_fn, out_names, seed, *, grad_args=None, hints=None, fresh=None, **opts
):
    """Gradients w.r.t. every floating input (float64) against the reference's. A module's
    values check here shows a counterexample when `fresh` says how to make its cases (its
    `Case.fresh()`: sizes, make, sent; `module_counterexample_on_failure`)."""
    args = tensors.to(args, "cpu", torch.float64)
    kwargs = tensors.to(kwargs or {}, "cpu", torch.float64)
    grad_args = (
        grad_args
        if grad_args is not None
        else [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    )
    s_args = [
        a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
        for i, a in enumerate(args)
    ]
    expected = calls.reference_outputs(ref_fn, args, kwargs, out_names)
    cot = [tensors.randn(e.shape, seed + k) for k, e in enumerate(expected.values())]
    reply = calls.call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = calls.describe_call(name, args, kwargs)
    got = calls.outputs(reply.value, what, out_names)
    if fresh is not None:
        shows = counterexamples.module_counterexample_on_failure(
            sub, cfg, name, got, expected, torch.float64, "cpu", *fresh
        )
    else:
        shows = counterexamples.counterexample_on_failure(
            sub, cfg, name, args, kwargs, ref_fn, got, expected, torch.float64, "cpu", opts
        )
    with shows:
        value_checks.check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints)
    grads = reply.grads or {}
    line = calls.grads_error(grads)
    if line is not None:
        failing.fail(calls.with_cause(line, calls.grads_hint(grads) or causes.detached(), calls.gradients_of(what)))
    r_args = [
        a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
        for i, a in enumerate(args)
    ]
    r_out = ref_fn(*r_args, **kwargs)
    r_out = [r_out] if len(out_names) == 1 else list(r_out)
    leaves = [r_args[i] for i in grad_args]
    r_grads = vjp(r_out, leaves, cot)
    got_grads = grads.get("inputs") or []
    for k, (i, rg) in enumerate(zip(grad_args, r_grads)):
        gg = got_grads[k] if k < len(got_grads) else None
        label = t("gradient_wrt_argument", what=what, i=i + 1)
        if rg is None:
            continue
        if gg is None:
            failing.fail(failing.caused(t("no_gradient_reached", what=label), causes.detached()))
        try:
            value_checks.assert_close(gg, rg, label, cfg, torch.float64, compared="gradient")
        except Failure as exc:
            # the outputs were right (checked above): the forward pass computes the function, its
            # graph does not, which is what a path cut from autograd does (a cause found already stays)
            failure = Failure(
                *((exc.symptom, exc.cause) if exc.cause else (f"{exc.symptom} ", Msg("cause_gradient_path_cut"))),
                compared=exc.compared,
            )
            if fresh is None and isinstance(gg, torch.Tensor) and gg.shape == rg.shape:  # a second look
                failure.counterexample = lambda: counterexamples._gradient_counterexample(
                    sub, cfg, name, args, kwargs, ref_fn, out_names, grad_args, opts
                )
            raise failure from None
    return reply, r_grads


def check_finite_grads(sub, name, args, kwargs, out_names, seed, **opts):
    """Gradients w.r.t. every floating input exist and hold no NaN or inf (the
    fully-masked property: a guarded softmax keeps them finite). Their values
    are the gradients check's business."""
    args = tensors.to(args, "cpu", torch.float64)
    s_args = [
        a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args
    ]
    shapes = None
    reply = calls.call(sub, name, s_args, kwargs, **opts)
    shapes = [
        tuple(o.shape) for o in calls.outputs(reply.value, calls.describe_call(name, args, kwargs), out_names).values()
    ]
    cot = [tensors.randn(sh, seed + k) for k, sh in enumerate(shapes)]
    reply = calls.call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = calls.describe_call(name, args, kwargs)
    grads = reply.grads or {}
    line = calls.grads_error(grads)
    if line is not None:
        failing.fail(calls.with_cause(line, calls.grads_hint(grads) or causes.detached(), calls.gradients_of(what)))
    for i, g in enumerate(grads.get("inputs") or []):
        if isinstance(g, torch.Tensor) and not torch.isfinite(g.double()).all():
            failing.fail(
                failing.caused(
                    t("grad_nonfinite_dead_row", what=t("gradient_wrt_argument", what=what, i=i + 1)),
                    Msg("cause_grad_unguarded"),
                )
            )
    return reply

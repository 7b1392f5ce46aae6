"""Value checks: the student's outputs against the reference's on the same inputs (shape,
dtype, device, then values within grading.yml's tolerance), and the plausibility a
check of another property starts with (`check_runs`).

The yardstick is always the reference (`solutions/`, run here in the judge in float64 on
the CPU) or torch's own modules, never the student's code.
"""

import math

import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.suites import calls, causes, counterexamples, failing, tensors
from autograder.protocol import wire


def device_of(x):
    return getattr(x, "wire_device", str(x.device))


def same_device(got, want):
    want = str(want)
    return got == want or (want == "cuda" and got.startswith("cuda")) or (got == "cuda:0" and want == "cuda")


def check_meta(x, what, shape=None, dtype=None, device=None, hint=None):
    """Shape, dtype and device of a returned tensor, with a likely cause.

    `hint(got_shape, expected_shape)` may name a likely cause for a wrong shape.
    """
    if shape is not None and tuple(x.shape) != tuple(shape):
        got, want = tuple(x.shape), tuple(shape)
        cause = hint(got, want) if hint else None
        failing.fail(
            failing.caused(
                t("shape_differs", what=what, got=got, expected=want), cause or causes.shape_cause(got, want), ". "
            )
        )
    if dtype is not None and x.dtype != dtype:
        cause = Msg("cause_created_float32") if dtype != torch.float32 and x.dtype == torch.float32 else None
        failing.fail(
            failing.caused(
                t("dtype_differs", what=what, got=wire.dtype_name(x.dtype), expected=wire.dtype_name(dtype)), cause
            )
        )
    if device is not None and not same_device(device_of(x), device):
        failing.fail(
            failing.caused(
                t("device_differs", what=what, got=device_of(x), expected=device), Msg("cause_no_device_short")
            )
        )


def _index(flat_index, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat_index % s)
        flat_index //= s
    return tuple(reversed(idx))


FLOAT32_ROUNDING = 8 * torch.finfo(torch.float32).eps


def assert_close(got, expected, what, cfg, dtype=None, hint=None, compared=""):
    """`got` within the grading.yml tolerance of `expected` (both any dtype); `hint(got, expected)`,
    the one signature of every hint, may name a likely cause; `compared`: what the values are
    where they are the student's code against the reference's (`Failure.compared`: a call's
    outputs, its gradients w.r.t. its inputs, its outputs in a lower precision), else ""."""
    dtype = dtype or got.dtype
    atol, rtol = cfg.tolerance(dtype)
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    if g.shape != e.shape:
        failing.fail(
            failing.caused(
                t("shape_differs", what=what, got=tuple(g.shape), expected=tuple(e.shape)),
                causes.shape_cause(tuple(g.shape), tuple(e.shape)),
                ". ",
            )
        )
    why = None
    bad_nan = torch.isnan(g) & ~torch.isnan(e)
    if bad_nan.any():
        i = _index(int(bad_nan.reshape(-1).nonzero()[0]), g.shape) if g.dim() else ()
        why = t("nan_values", n=int(bad_nan.sum()), index=i)
    else:
        err = (g - e).abs().nan_to_num(nan=0.0, posinf=math.inf)
        over = err - (atol + rtol * e.abs())
        if (over > 0).any():
            k = int(over.reshape(-1).argmax())
            i = _index(k, g.shape) if g.dim() else ()
            why = t(
                "values_differ",
                n=int((over > 0).sum()),
                total=g.numel(),
                err=number(float(err.reshape(-1)[k]), ".3g"),
                index=i,
                dtype=wire.dtype_name(dtype),
                atol=number(atol, "g"),
                rtol=number(rtol, "g"),
            )
    if why:
        cause = hint(got, expected) if hint else None
        if cause is None and dtype == torch.float64 and not bad_nan.any():
            # float32's own rounding, a few units of its last place on the values' scale: wider
            # gaps (numbers typed to 4 decimals) are within float32's tolerance but no detour
            if bool((err <= FLOAT32_ROUNDING * (e.abs() + e.abs().max())).all()):
                cause = Msg("cause_float32_detour")
        failing.fail(failing.caused(f"{what}: {why}.", cause), compared=compared)


def check_dead_rows(what, weights, dead, unmasked=None, others=(), masked=None, *, cfg):
    """Rows with no allowed key: all-zero weights (and `others`, e.g. the context, all zero there), never NaN
    (`cfg`: the judge's, for the likely cause)."""
    w = weights.detach().double().cpu()
    d = dead.cpu().expand(w.shape[:-1])
    bad = torch.isnan(w).any() or (w[d].abs().max() != 0 if d.any() else False)
    for o, o_dead in others:
        o = o.detach().double().cpu()
        bad = bad or torch.isnan(o).any() or (o[o_dead.cpu()].abs().max() != 0 if o_dead.any() else False)
    if bad:
        cause = causes.dead_rows_cause(weights, dead, unmasked, cfg, masked)
        symptom = t("dead_rows_weights_output", what=what) if others else t("dead_rows_weights", what=what)
        failing.fail(failing.caused(symptom, cause, ". "))


def check_outputs(got, expected, what, cfg, dtype, device, hints=None, shape_hints=None, compared="output"):
    """Each named output of a call of the student's code: shape, dtype, device, then values
    against the reference's (`expected`; not on meta), a failed one `compared` (`Failure.compared`).

    Values of the weights are checked first: their pattern tells the most.
    """
    for name, exp in expected.items():
        check_meta(got[name], f"{what} -> {name}", tuple(exp.shape), dtype, device, hint=(shape_hints or {}).get(name))
    for name in sorted(expected, key=lambda n: n != "weights"):
        out, exp = got[name], expected[name]
        if str(device) != "meta":
            hint = (hints or {}).get(name)
            assert_close(out, exp, f"{what} -> {name}", cfg, dtype, hint=hint, compared=compared)


def _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts):
    """Call the student's `name` on the inputs cast to `dtype` and moved to `device`:
    (its outputs by name, the reference's on the inputs as given, the call described)."""
    args_d = tensors.to(args, device, dtype)
    kwargs_d = tensors.to(kwargs or {}, device, dtype)
    if str(device) == "meta":
        args_d, kwargs_d = tensors.as_meta(args_d), tensors.as_meta(kwargs_d)
    reply = calls.call(sub, name, args_d, kwargs_d, device=str(device), **opts)
    what = calls.describe_call(name, args_d, kwargs_d)
    return calls.outputs(reply.value, what, out_names), calls.reference_outputs(ref_fn, args, kwargs, out_names), what


def check_values(
    sub,
    cfg,
    name,
    args,
    kwargs,
    ref_fn,
    out_names,
    *,
    dtype=torch.float64,
    device="cpu",
    hints=None,
    shape_hints=None,
    **opts,
):
    """The student's outputs against the reference on the same inputs."""
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    with counterexamples.counterexample_on_failure(
        sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts
    ):
        check_outputs(got, expected, what, cfg, dtype, device, hints, shape_hints)
    return got, expected


def check_runs(
    sub, cfg, name, args, kwargs, ref_fn, out_names, *, dtype=torch.float64, device="cpu", shape_hints=None, **opts
):
    """The call returns the contract's outputs: their shapes (the reference's),
    the inputs' dtype and device. Values are the values check's business: a
    check of another property starts with this, so that it judges its own
    property even when the values are wrong. On the meta device (no values),
    the same call on the CPU must give plausible outputs first."""
    if str(device) == "meta":
        check_runs(
            sub, cfg, name, args, kwargs, ref_fn, out_names, dtype=dtype, device="cpu", shape_hints=shape_hints, **opts
        )
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    for n, exp in expected.items():
        check_meta(got[n], f"{what} -> {n}", tuple(exp.shape), dtype, device, hint=(shape_hints or {}).get(n))
    if str(device) != "meta":
        check_plausible(got, expected, what)
    return got, expected


def check_plausible(got, expected, what, hints=None):
    """The outputs are the function's real work, not a placeholder: no NaN or
    inf where the reference has a non-zero number, weights whose rows sum to 1
    wherever the reference's do, and not all zeros where the reference is not.
    A check of another property needs this much (so that returning zeros or
    NaN of the right shape earns none of it); a wrong formula passes it.
    `hints` ({output: hint}, as `check_outputs` takes them): a likely cause that
    reproduces the output (a mask that leaves a row no key)."""
    for n, exp in expected.items():
        g, e = got[n].detach().double().cpu(), exp.detach().double().cpu()
        if g.shape != e.shape:
            continue
        hint = (hints or {}).get(n)

        def cause(n=n, hint=hint):
            return hint(got[n], expected[n]) if hint else None

        bad = ~torch.isfinite(g) & torch.isfinite(e) & (e != 0)
        if bad.any():
            failing.fail(failing.caused(t("not_plausible_nan", what=f"{what} -> {n}", n=int(bad.sum())), cause()))
        if n == "weights" and g.dim() >= 1:
            live = (e.sum(-1) - 1).abs() < 1e-6  # rows the reference gives a distribution
            sums = g.sum(-1)[live]
            if sums.numel() and not torch.allclose(sums, torch.ones_like(sums), atol=0.05):
                worst = float(sums[(sums - 1).abs().argmax()])
                failing.fail(failing.caused(t("not_weights", what=f"{what} -> {n}", sum=number(worst, ".3g")), cause()))
        elif g.numel() and g.abs().max() == 0 and e.abs().max() > 0:
            failing.fail(failing.caused(t("all_zeros", what=f"{what} -> {n}"), cause()))

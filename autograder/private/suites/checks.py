"""What the hidden suites share: calling the submission, checking what came back,
and failure messages that name the bug without showing hidden data.

Every check that fails calls `fail(message)`. A message says what was checked,
what came back against what was expected (shapes, dtypes, devices, the max
abs error and its index), and a likely cause when the output shows one. It
never prints the hidden inputs or the expected tensors.

The yardstick is always the reference (`solutions/`, run here in the judge in
float64 on the CPU) or torch's own modules, never the student's code.
"""
import contextlib
import math

import pytest
import torch

from autograder import config as config_mod
from autograder.protocol import wire


# Causes several checks name: one wording each, so the feedback says each once.
MASK_IGNORED = "the mask is not applied: pass it to the softmax (masked_softmax(scores, mask))."
IN_PLACE = ("an in-place operation on an input (masked_fill_, +=, /=, x[...] = ..., transpose_); use out-of-place "
            "operations (masked_fill, not masked_fill_; x = x / s, not x /= s).")


def fail(message):
    pytest.fail(message, pytrace=False)


# -- inputs -------------------------------------------------------------------
def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(shape, seed, dtype=torch.float64, scale=1.0):
    return torch.randn(shape, generator=gen(seed), dtype=torch.float64).mul(scale).to(dtype)


def rand_mask(shape, seed, p_true=0.7, ensure_row_dim=-1):
    """A random bool mask with at least one True along `ensure_row_dim` in every row."""
    m = torch.rand(shape, generator=gen(seed)) < p_true
    first = torch.zeros(shape, dtype=torch.bool)
    first.select(ensure_row_dim, 0).fill_(True)
    return m | first


def lengths_mask(lengths, T):
    return torch.arange(T).unsqueeze(0) < torch.as_tensor(lengths).unsqueeze(1)  # (B, T)


def to(value, device=None, dtype=None):
    """Cast the floating tensors in a (nested) value; other tensors only move."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() and dtype is not None:
            value = value.to(dtype)
        return value.to(device) if device is not None else value
    if isinstance(value, (list, tuple)):
        return type(value)(to(v, device, dtype) for v in value)
    if isinstance(value, dict):
        return {k: to(v, device, dtype) for k, v in value.items()}
    return value


def as_meta(value):
    """The same value with every tensor on the meta device (shapes and dtypes only)."""
    if isinstance(value, torch.Tensor):
        return torch.empty(value.shape, dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(as_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: as_meta(v) for k, v in value.items()}
    return value


# -- calling ------------------------------------------------------------------
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


BROADCAST_CAUSE = ("tensors of different shapes combined elementwise: broadcasting lines axes up from the right "
                   "(a missing unsqueeze, or an axis assumed to have another length?).")
WEAK_CAUSES = (BROADCAST_CAUSE,)  # read from an error line alone, they say little: a check that knows more replaces them

# What an error raised by the student's code usually means: (substrings of the
# error line, likely cause). Read from the error the worker reports, nothing else.
ERROR_CAUSES = [
    (("must be a 3D tensor", "batch1 must be", "batch2 must be"),
     "torch.bmm takes exactly 3-D tensors: use @ (torch.matmul), which takes any number of leading axes, "
     "with transpose(-2, -1)."),
    (("doesn't match the broadcast shape",),
     "an in-place operation (masked_fill_, +=, out=) into a tensor smaller than the result: a (T_q, T_k) "
     "tensor cannot grow to a batched mask's shape; use out-of-place operations (masked_fill, +)."),
    (("expected scalar type", "to have the same dtype", "same dtype", "dtype mismatch",
      "found Double", "found Float", "found Half", "found BFloat16"),
     "tensors of different dtypes meet in one operation: one was cast (.float(), .double()) or created "
     "without dtype= (torch.zeros/ones/tensor default to float32); keep the inputs' dtype."),
    (("mat1 and mat2 shapes cannot be multiplied", "same reduction dim", "Expected size for first two dimensions",
      "size mismatch", "shapes cannot be multiplied"),
     "a matrix product with an operand the wrong way round: a weight W of shape (out, in) applies as "
     "x @ W.T, and a batched product needs matching batch axes (a missing transpose or unsqueeze?)."),
    (("must match the size of tensor",), BROADCAST_CAUSE),
    (("Dimension out of range",),
     "an axis numbered from the front (transpose(2, 3), dim=2) assumes a fixed number of dimensions; "
     "count from the end (transpose(-2, -1), dim=-1)."),
    (("cannot be called on meta tensors", "Cannot copy out of meta tensor", "meta tensors"),
     "values read into Python or numpy (.item(), .tolist(), int(t), .numpy(), a Python loop or if over a "
     "tensor's values): keep the computation in torch operations (on the meta device tensors have no values)."),
    (("Can't call numpy() on Tensor that requires grad", "to numpy", "numpy()", "unsupported ScalarType"),
     "a .numpy() round trip: it leaves autograd and the device; stay in torch operations."),
    (("cannot be converted to type",),
     "a fill value too large for the dtype (-1e9 overflows float16): use float('-inf') or "
     "torch.finfo(scores.dtype).min, and zero fully masked rows afterwards."),
    (("is not on the expected device", "Expected all tensors to be on the same device", "device type",
      "on the same device"),
     "a tensor created without device= (it lands on the CPU): use device=x.device, zeros_like or new_zeros."),
    (("leaf Variable that requires grad is being used in an in-place operation",
      "modified by an inplace operation"),
     IN_PLACE),
]


def error_hint(error):
    """A likely cause for an error line the worker reported (or None)."""
    for needles, cause in ERROR_CAUSES:
        if any(n in error for n in needles):
            return cause
    return None


def with_cause(error, cause=None):
    """The worker's error line followed by a likely cause when one is known."""
    error = error.rstrip()
    cause = cause if cause is not None else error_hint(error)
    if not cause or "Likely cause" in error:
        return error
    return f"{error} Likely cause: {cause}" if error.endswith((".", "!", "?", ":")) else \
        f"{error}. Likely cause: {cause}"


@contextlib.contextmanager
def explain_errors(cause):
    """Inside: a failure that reports an error raised by the student's code,
    with no likely cause or only a weak one read from the error line alone
    (WEAK_CAUSES), takes `cause()`'s (computed only then; None: the message stays)."""
    try:
        yield
    except pytest.fail.Exception as exc:
        message = str(exc.msg)
        if " raised " not in message or ("Likely cause" in message and not any(w in message for w in WEAK_CAUSES)):
            raise
        why = cause()
        if not why:
            raise
        symptom = message.split(" Likely cause:")[0].rstrip()
        fail(f"{symptom.rstrip('.')}. Likely cause: {why}")


def call(sub, name, args, kwargs=None, **opts):
    """Call the student's `name`; fail with its error unless it returned."""
    reply = sub.call(name, args, kwargs, **opts)
    if not reply.ok:
        fail(f"{describe_call(name, args, kwargs)} {with_cause(reply.error)}")
    return reply


def outputs(value, what, out_names):
    """Split a return value into named tensors: one tensor, or a tuple of them."""
    if len(out_names) == 1:
        return {out_names[0]: tensor(value, f"{what}")}
    if not isinstance(value, (tuple, list)) or len(value) != len(out_names):
        got = f"a {type(value).__name__} of length {len(value)}" if isinstance(value, (tuple, list)) else _kind(value)
        fail(f"{what} returned {got}, expected a tuple ({', '.join(out_names)})")
    return {n: tensor(v, f"{what} -> {n}") for n, v in zip(out_names, value)}


def _kind(v):
    if isinstance(v, wire.Other):
        return f"a {v.type_name}"
    return "None" if v is None else f"a {type(v).__name__}"


def tensor(value, what):
    if not isinstance(value, torch.Tensor):
        fail(f"{what}: expected a torch.Tensor, got {_kind(value)}")
    return value


def device_of(t):
    return getattr(t, "wire_device", str(t.device))


def same_device(got, want):
    want = str(want)
    return got == want or (want == "cuda" and got.startswith("cuda")) or (got == "cuda:0" and want == "cuda")


def check_meta(t, what, shape=None, dtype=None, device=None, hint=None):
    """Shape, dtype and device of a returned tensor, with a likely cause.

    `hint(got_shape, expected_shape)` may name a likely cause for a wrong shape.
    """
    if shape is not None and tuple(t.shape) != tuple(shape):
        cause = hint(tuple(t.shape), tuple(shape)) if hint else None
        fail(f"{what}: shape {tuple(t.shape)}, expected {tuple(shape)}"
             + (f". Likely cause: {cause}" if cause else shape_hint(tuple(t.shape), tuple(shape))))
    if dtype is not None and t.dtype != dtype:
        hint = ""
        if dtype != torch.float32 and t.dtype == torch.float32:
            hint = " Likely cause: a tensor created as float32 (torch.tensor/zeros/ones without dtype=) or a .float() cast."
        fail(f"{what}: dtype {wire.dtype_name(t.dtype)}, expected {wire.dtype_name(dtype)} (the inputs' dtype).{hint}")
    if device is not None and not same_device(device_of(t), device):
        fail(f"{what}: on device {device_of(t)}, expected {device} (the inputs' device). "
             "Likely cause: a tensor created without device= (it lands on the CPU).")


def shape_hint(got, want):
    if len(got) == len(want) - 1 and len(want) >= 3 and got[0] == want[0] * want[1] and tuple(got[1:]) == tuple(want[2:]):
        return (". Likely cause: two axes folded into one (the heads into the batch, as d2l's transpose_qkv "
                "does: (B * n_heads, T, d_head)); keep each its own axis")
    if len(got) == len(want) and sorted(got) == sorted(want):
        return ". Likely cause: axes swapped (a transpose or view in the wrong order?)"
    if len(got) == len(want) + 1 and 1 in got:
        return ". Likely cause: a singleton axis left in (a missing squeeze?)"
    if len(got) > len(want):
        return ". Likely cause: silent broadcasting between tensors of different shapes (a missing unsqueeze?)"
    return ""


# -- values -------------------------------------------------------------------
def _index(flat_index, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat_index % s)
        flat_index //= s
    return tuple(reversed(idx))


def matches(got, want):
    """For likely causes: does `got` equal an alternative formula's `want` as
    closely as grading.yml asks of the right answer in got's dtype?"""
    atol, rtol = config_mod.load().tolerance(got.dtype)
    g = got.detach().double().cpu()
    w = want.detach().double().cpu()
    return g.shape == w.shape and not torch.isnan(g).any() and torch.allclose(g, w, atol=atol, rtol=rtol)


def assert_close(got, expected, what, cfg, dtype=None, hint=None):
    """`got` within the grading.yml tolerance of `expected` (both any dtype); `hint(got, expected)`,
    the one signature of every hint, may name a likely cause."""
    dtype = dtype or got.dtype
    atol, rtol = cfg.tolerance(dtype)
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    if g.shape != e.shape:
        fail(f"{what}: shape {tuple(g.shape)}, expected {tuple(e.shape)}{shape_hint(tuple(g.shape), tuple(e.shape))}")
    why = None
    bad_nan = torch.isnan(g) & ~torch.isnan(e)
    if bad_nan.any():
        i = _index(int(bad_nan.reshape(-1).nonzero()[0]), g.shape) if g.dim() else ()
        why = f"{int(bad_nan.sum())} NaN value(s) where numbers were expected, first at index {i}"
    else:
        err = (g - e).abs().nan_to_num(nan=0.0, posinf=math.inf)
        over = err - (atol + rtol * e.abs())
        if (over > 0).any():
            k = int(over.reshape(-1).argmax())
            i = _index(k, g.shape) if g.dim() else ()
            why = (f"{int((over > 0).sum())} of {g.numel()} values differ from the reference; "
                   f"max abs error {float(err.reshape(-1)[k]):.3g} at index {i} "
                   f"(tolerance for {wire.dtype_name(dtype)}: atol {atol:g}, rtol {rtol:g})")
    if why:
        cause = hint(got, expected) if hint else None
        if cause is None and dtype == torch.float64 and not bad_nan.any():
            atol32, rtol32 = cfg.tolerance(torch.float32)
            if bool((err <= atol32 + rtol32 * e.abs()).all()):
                cause = ("part of the computation ran in float32 (a .float() cast, softmax(..., dtype=torch.float32), "
                         "or a tensor created without dtype=, which is float32): the result is float64 but only as "
                         "accurate as float32; keep the inputs' dtype throughout.")
        fail(f"{what}: {why}." + (f" Likely cause: {cause}" if cause else ""))


def weights_hint(got, expected, mask=None):
    """A likely cause for attention weights that differ from the reference."""
    g, e = got.detach().double(), expected.detach().double()
    if torch.isnan(g).any():
        if mask is not None and (~mask.expand_as(g)).all(-1).any():
            return dead_rows_cause(g, ~mask.cpu().expand_as(g).any(-1))
        return "NaN: exp overflowed (subtract the row maximum before exp) or a division by zero."
    if g.dim() >= 2:
        sums_last = g.sum(-1)
        sums_prev = g.sum(-2)
        if not torch.allclose(sums_last, e.sum(-1), atol=1e-3) and torch.allclose(sums_prev, torch.ones_like(sums_prev), atol=1e-3):
            return "columns sum to 1 along axis -2: softmax over the query axis instead of the key axis (dim=-1)?"
        if g.shape[-1] == g.shape[-2] and torch.allclose(g.transpose(-1, -2), e, atol=1e-4):
            return "the weights are transposed (queries and keys swapped)?"
    m = mask.cpu().expand_as(g) if mask is not None else torch.ones_like(g, dtype=torch.bool)
    if g.dim() >= 1 and g.shape[-1] > 1:
        n = m.sum(-1, keepdim=True)
        uniform = torch.where(m, 1.0 / n.clamp(min=1).double(), torch.zeros_like(g))
        live = m.any(-1)
        if (live.any() and torch.allclose(g[live], uniform[live], atol=1e-6)
                and not torch.allclose(e[live], uniform[live], atol=1e-3)):
            return ("the weights are uniform over the allowed keys: the scores do not reach the softmax "
                    "(constant or hard-coded scores?).")
    if mask is not None:
        dead = ~m.any(-1)  # rows with no allowed key
        if dead.any() and g[dead].abs().max() > 0 and (g[~dead] - e[~dead]).abs().max() < 1e-4:
            return dead_rows_cause(g, dead) or ("a row with no allowed key gets non-zero weights: it must give "
                                                "all-zero weights (guard the rows that have no allowed key).")
        leak = g[~m].abs()
        if leak.numel() and leak.max() > 0:
            inside = g[m].abs()
            if inside.numel() and inside.max() < 1e-6:
                return "non-zero weights exactly where the mask is False: mask polarity inverted (True means 'may attend')?"
            return "masked keys get non-zero weight: mask filled with 0 instead of -inf, or applied after the softmax?"
        allowed = m.any(-1)
        rows = g.sum(-1)
        if allowed.any() and not torch.allclose(rows[allowed], torch.ones_like(rows[allowed]), atol=1e-3):
            return "rows with allowed keys do not sum to 1: masked after the softmax without renormalising?"
    rows = g.sum(-1)
    if not torch.allclose(rows, e.sum(-1), atol=1e-3):
        return "rows do not sum to 1 along the key axis: not a softmax over dim=-1?"
    return None


def dead_rows_cause(weights, dead, unmasked=None):
    """A likely cause for rows with no allowed key (`dead`: a bool tensor over
    weights.shape[:-1]) that are not all zero, from what those rows hold.
    `unmasked`: the reference's weights for the same call without a mask."""
    w = weights.detach().double().cpu()
    dead = dead.cpu().expand(w.shape[:-1])
    rows = w[dead]
    if rows.numel() == 0:
        return None
    if torch.isnan(rows).any():
        return ("NaN on a row with no allowed key: the masked scores are filled with -inf and nothing guards "
                "the row (exp(-inf - (-inf)) is NaN), or the weights are masked after the softmax and divided by "
                "a row sum of 0; give such rows zeros (torch.where on the row's any()).")
    if unmasked is not None and matches(weights, unmasked.expand(w.shape)):
        return MASK_IGNORED
    T = rows.shape[-1]
    if torch.allclose(rows, torch.full_like(rows, 1.0 / T), atol=1e-3):
        return ("every key of a row with no allowed key gets the same weight 1/T: a finite fill value (-1e6, "
                "-1e9, torch.finfo(dtype).min) and no guard; zero the rows that have no allowed key.")
    if unmasked is not None:
        plain = unmasked.detach().double().cpu().expand(w.shape)[dead]
        if torch.allclose(rows, plain, atol=1e-4):
            return ("a row with no allowed key gets the weights of the unmasked softmax: the mask is added as a "
                    "constant (scores - 1e9 * ~mask), and a constant over a whole row changes nothing after the "
                    "softmax; use masked_fill or torch.where, then zero the rows with no allowed key.")
    return None


def check_dead_rows(what, weights, dead, unmasked=None, others=()):
    """Rows with no allowed key: all-zero weights (and `others`, e.g. the context, all zero there), never NaN."""
    w = weights.detach().double().cpu()
    d = dead.cpu().expand(w.shape[:-1])
    bad = torch.isnan(w).any() or (w[d].abs().max() != 0 if d.any() else False)
    for o, o_dead in others:
        o = o.detach().double().cpu()
        bad = bad or torch.isnan(o).any() or (o[o_dead.cpu()].abs().max() != 0 if o_dead.any() else False)
    if bad:
        cause = dead_rows_cause(weights, dead, unmasked)
        fail(f"{what}: a row with no allowed key must give all-zero weights{' and output' if others else ''}, "
             f"never NaN" + (f". Likely cause: {cause}" if cause else ""))


def check_outputs(got, expected, what, cfg, dtype, device, hints=None, shape_hints=None):
    """Each named output: shape, dtype, device, then values (not on meta).

    Values of the weights are checked first: their pattern tells the most.
    """
    for name, exp in expected.items():
        check_meta(got[name], f"{what} -> {name}", tuple(exp.shape), dtype, device,
                   hint=(shape_hints or {}).get(name))
    for name in sorted(expected, key=lambda n: n != "weights"):
        t, exp = got[name], expected[name]
        if str(device) != "meta":
            hint = (hints or {}).get(name)
            assert_close(t, exp, f"{what} -> {name}", cfg, dtype, hint=hint)


def reference_outputs(ref_fn, args, kwargs, out_names):
    """The reference's outputs in float64 on the CPU, as a dict by name."""
    with torch.no_grad():
        value = ref_fn(*to(args, "cpu", torch.float64), **to(kwargs or {}, "cpu", torch.float64))
    if len(out_names) == 1:
        return {out_names[0]: value}
    return dict(zip(out_names, value))


# -- families -----------------------------------------------------------------
def _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts):
    """Call the student's `name` on the inputs cast to `dtype` and moved to `device`:
    (its outputs by name, the reference's on the inputs as given, the call described)."""
    args_d = to(args, device, dtype)
    kwargs_d = to(kwargs or {}, device, dtype)
    if str(device) == "meta":
        args_d, kwargs_d = as_meta(args_d), as_meta(kwargs_d)
    reply = call(sub, name, args_d, kwargs_d, device=str(device), **opts)
    what = describe_call(name, args_d, kwargs_d)
    return outputs(reply.value, what, out_names), reference_outputs(ref_fn, args, kwargs, out_names), what


def check_values(sub, cfg, name, args, kwargs, ref_fn, out_names, *, dtype=torch.float64,
                 device="cpu", hints=None, shape_hints=None, **opts):
    """The student's outputs against the reference on the same inputs."""
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    check_outputs(got, expected, what, cfg, dtype, device, hints, shape_hints)
    return got, expected


def check_runs(sub, cfg, name, args, kwargs, ref_fn, out_names, *, dtype=torch.float64, device="cpu",
               shape_hints=None, **opts):
    """The call returns the contract's outputs: their shapes (the reference's),
    the inputs' dtype and device. Values are the values check's business: a
    check of another property starts with this, so that it judges its own
    property even when the values are wrong."""
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    for n, exp in expected.items():
        check_meta(got[n], f"{what} -> {n}", tuple(exp.shape), dtype, device, hint=(shape_hints or {}).get(n))
    return got, expected


def close_enough(got, expected, cfg):
    """Whether every output is within grading.yml's tolerance of the reference (no message)."""
    for n, exp in expected.items():
        g = got[n].detach().double().cpu()
        e = exp.detach().double().cpu()
        atol, rtol = cfg.tolerance(got[n].dtype)
        if g.shape != e.shape or not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True):
            return False
    return True


def check_in_dtype(sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, *, hints=None,
                   shape_hints=None, **opts):
    """The dtype-and-device property: the outputs keep the inputs' dtype and
    device, hold no NaN or inf where the reference does not, and, when the
    function is right in float64, are as close to the reference as `dtype`
    allows (the reference computed in float64 from the same rounded inputs).
    A function already wrong in float64 is the values check's finding, not
    charged again here."""
    got, expected = check_runs(sub, cfg, name, args, kwargs, ref_fn, out_names, dtype=dtype, device=device,
                               shape_hints=shape_hints, **opts)
    if str(device) == "meta":
        return got
    rounded_args, rounded_kwargs = to(args, "cpu", dtype), to(kwargs or {}, "cpu", dtype)
    expected = reference_outputs(ref_fn, rounded_args, rounded_kwargs, out_names)
    for n, exp in expected.items():
        g = got[n].detach().double().cpu()
        bad = ~torch.isfinite(g) & torch.isfinite(exp)
        if bad.any():
            fail(f"{describe_call(name, to(args, device, dtype), to(kwargs or {}, device, dtype))} -> {n}: "
                 f"{int(bad.sum())} NaN or inf value(s) in {wire.dtype_name(dtype)} where the reference is finite. "
                 "Likely cause: a constant too large for the dtype (-1e9 or 1e30 overflows float16), or exp "
                 "without subtracting the row maximum.")
    if dtype == torch.float64 and str(device) == "cpu":
        return got
    base, base_expected = check_runs(sub, cfg, name, args, kwargs, ref_fn, out_names, **opts)
    if close_enough(base, base_expected, cfg):
        check_outputs(got, expected, describe_call(name, to(args, device, dtype), to(kwargs or {}, device, dtype)),
                      cfg, dtype, device, hints)
    return got


DETACHED = ("the computation leaves autograd on the way (.detach(), a .numpy()/.item()/.tolist() round trip, "
            "torch.tensor(...) of computed values, or torch.no_grad()).")


def check_grads(sub, cfg, name, args, kwargs, ref_fn, out_names, seed, *, grad_args=None, hints=None, **opts):
    """Gradients w.r.t. every floating input (float64) against the reference's."""
    args = to(args, "cpu", torch.float64)
    kwargs = to(kwargs or {}, "cpu", torch.float64)
    grad_args = grad_args if grad_args is not None else [
        i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    s_args = [a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
              for i, a in enumerate(args)]
    expected = reference_outputs(ref_fn, args, kwargs, out_names)
    cot = [randn(e.shape, seed + k) for k, e in enumerate(expected.values())]
    reply = call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = describe_call(name, args, kwargs)
    got = outputs(reply.value, what, out_names)
    check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints)
    grads = reply.grads or {}
    if "error" in grads:
        fail(f"gradients of {what}: {with_cause(grads['error'], error_hint(grads['error']) or DETACHED)}")
    r_args = [a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
              for i, a in enumerate(args)]
    r_out = ref_fn(*r_args, **kwargs)
    r_out = [r_out] if len(out_names) == 1 else list(r_out)
    leaves = [r_args[i] for i in grad_args]
    r_grads = torch.autograd.grad(r_out, leaves, grad_outputs=cot, allow_unused=True)
    got_grads = grads.get("inputs") or []
    for k, (i, rg) in enumerate(zip(grad_args, r_grads)):
        gg = got_grads[k] if k < len(got_grads) else None
        label = f"gradient of {what} w.r.t. argument {i + 1}"
        if rg is None:
            continue
        if gg is None:
            fail(f"{label}: no gradient reached this input. Likely cause: {DETACHED}")
        assert_close(gg, rg, label, cfg, torch.float64)
    return reply, r_grads


def check_finite_grads(sub, name, args, kwargs, out_names, seed, **opts):
    """Gradients w.r.t. every floating input exist and hold no NaN or inf (the
    fully-masked property: a guarded softmax keeps them finite). Their values
    are the gradients check's business."""
    args = to(args, "cpu", torch.float64)
    s_args = [a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
              for a in args]
    shapes = None
    reply = call(sub, name, s_args, kwargs, **opts)
    shapes = [tuple(t.shape) for t in outputs(reply.value, describe_call(name, args, kwargs), out_names).values()]
    cot = [randn(sh, seed + k) for k, sh in enumerate(shapes)]
    reply = call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = describe_call(name, args, kwargs)
    grads = reply.grads or {}
    if "error" in grads:
        fail(f"gradients of {what}: {with_cause(grads['error'], error_hint(grads['error']) or DETACHED)}")
    for i, g in enumerate(grads.get("inputs") or []):
        if isinstance(g, torch.Tensor) and not torch.isfinite(g.double()).all():
            fail(f"gradient of {what} w.r.t. argument {i + 1}: NaN or inf with a fully masked row. Likely cause: "
                 "the masked scores are filled with -inf and the softmax is not guarded (exp(-inf - (-inf)) is "
                 "NaN, and so is its gradient): give fully masked rows zeros without dividing by zero.")
    return reply


def _same_tensor(sent, back):
    """Whether `back` (rebuilt from the worker's bytes) is `sent`, bit for bit
    (meta tensors: shape and dtype only). Decided here, in the judge."""
    if not isinstance(back, torch.Tensor) or back.dtype != sent.dtype or tuple(back.shape) != tuple(sent.shape):
        return False
    if sent.device.type == "meta" or back.device.type == "meta":
        return True
    return wire.tensor_bytes(back) == wire.tensor_bytes(sent)


def check_inputs_unchanged(sub, name, args, kwargs=None, **opts):
    reply = call(sub, name, args, kwargs, return_inputs=True, **opts)
    flat = wire.flat_tensors([list(args), list((kwargs or {}).values())])
    after = reply.inputs_after
    if not isinstance(after, list) or len(after) != len(flat):
        fail(f"{describe_call(name, args, kwargs)}: the worker did not send back the {len(flat)} input tensors "
             "after the call, so they cannot be checked")
    for i, (sent, back) in enumerate(zip(flat, after)):
        if not _same_tensor(sent, back):
            fail(f"{describe_call(name, args, kwargs)} changed its input tensor number {i + 1} "
                 f"(shape {tuple(flat[i].shape) if i < len(flat) else '?'}) in place. Likely cause: {IN_PLACE}")
    return reply


def check_vectorised(sub, name, small, large, what_grows, **opts):
    """The number of torch calls must not grow with batch size, length or heads.

    `small` and `large` are (args, kwargs) pairs that differ only in `what_grows`.
    """
    no_tracing_tampering(sub, name)
    counts = []
    for args, kwargs in (small, large):
        reply = call(sub, name, args, kwargs, trace=True, **opts)
        counts.append(reply.op_count)
    if counts[0] is None or counts[1] is None:
        fail(f"{name}: the worker did not report its operation count")
    if counts[1] > counts[0]:
        fail(f"{name}: ran {counts[0]} torch operations for the smaller input and {counts[1]} "
             f"when only {what_grows} grew. Likely cause: a Python loop over {what_grows} (or over a tensor's "
             "rows); use batched tensor operations.")


def no_tracing_tampering(sub, name):
    """The operation counter runs in the student's process: code that reaches
    for torch's tracing internals (or the kit's own modules) could switch it
    off, so it fails the checks that rely on it (judged on the source, by the
    notebook reader: `sub.submission.findings`)."""
    findings = getattr(sub.submission, "findings", None)
    if not isinstance(findings, dict):
        fail(f"{name}: the checks of the notebook's source did not run, so this check cannot be made "
             "(reported to the course staff)")
    found = findings.get("tracing") or []
    if found:
        fail(f"{name}: {found[0]}; this check counts torch calls and cannot trust a notebook that "
             "touches how they are traced. Likely cause: torch._C / torch.overrides / __torch_function__ "
             "in your code; plain tensor operations need none of them.")


def check_from_scratch(sub, cells, provided, name, args, kwargs=None, **opts):
    """No torch built-in attention in the student's code: judged on the source
    (parsed by the notebook reader: `sub.submission.findings`; a provided
    function of a built-in's name excuses that name) and on the calls traced
    while it ran."""
    no_tracing_tampering(sub, name)
    reply = call(sub, name, args, kwargs, trace=True, **opts)
    findings = sub.submission.findings  # a dict: no_tracing_tampering checked it
    excused = findings.get("excused") or {}
    found = sorted(f for f in list((findings.get("forbidden") or {}).get(name) or []) + list(findings.get("unchecked") or [])
                   if excused.get(f) not in provided)
    if found:
        fail(f"`{name}` must implement attention itself: {found[0]}. Likely cause: a call to torch's built-in "
             "attention; compute the scores, the masked softmax and the weighted sum with tensor operations.")
    if reply.forbidden_seen:
        fail(f"`{name}` called torch's built-in `{reply.forbidden_seen[0]}` while it ran. Likely cause: a call to "
             "torch's built-in attention (directly or through a helper); implement it yourself.")
    return reply


def expect_value_error(sub, name, args, kwargs=None, why="", **opts):
    reply = sub.call(name, args, kwargs, **opts)
    what = describe_call(name, args, kwargs)
    if reply.ok:
        fail(f"{what} returned normally; expected ValueError ({why}). Likely cause: the sizes are not checked; "
             "test them first and raise ValueError with a message.")
    if reply.error.startswith("raised AssertionError"):
        fail(f"{what} {reply.error.rstrip()}; expected ValueError ({why}). Likely cause: the sizes are checked "
             "with assert, which raises AssertionError (and is skipped under python -O); raise ValueError with a "
             "message instead.")
    if not reply.error.startswith("raised ValueError"):
        fail(f"{what} {reply.error.rstrip()}; expected ValueError ({why}). Likely cause: the sizes are not checked "
             "before they are used, so the computation fails on its own; test them first and raise ValueError.")

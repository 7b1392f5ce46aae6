"""The likely causes' vocabulary: what a wrong output or an error line usually means, as
catalog keys (`Msg`): shapes, attention weights, masked rows, torch's error lines.
"""

import torch

from autograder.judge.failure import Msg
from autograder.private.suites import compare


# Causes several checks name: one wording each, so the feedback says each once.
def padding_leak_cause(weights, allowed, unmasked, cfg):
    """The likely cause when weights leak onto disallowed keys: `allowed` (bool, the
    weights' shape) marks the allowed keys, `unmasked` is the reference's weights with
    no mask at all (compared within the judge's `cfg` tolerance)."""
    leak = weights[~allowed].abs().max()
    if weights[allowed].abs().max() < 1e-6:
        return Msg("cause_polarity_real_token")
    if compare.matches(weights, unmasked, cfg):
        return mask_ignored()
    if leak > 1e-6:
        return Msg("cause_after_softmax_or_zero_fill")
    return Msg("cause_finite_fill_use_inf")


def mask_ignored():
    return Msg("cause_mask_ignored")


def in_place():
    return Msg("cause_in_place")


def detached():
    return Msg("cause_detached")


# Causes read from an error line alone say little: a check that knows more replaces
# them (keys of the catalog; a message holds one in any language).
WEAK_CAUSES = ("cause_broadcast",)


def is_weak(cause):
    """Whether a likely cause (a `Msg` or None) is one of WEAK_CAUSES."""
    return cause is not None and cause.key in WEAK_CAUSES


# What an error raised by the student's code usually means: (substrings of the
# error line, the catalog key of its likely cause). Read from the error the
# worker reports, nothing else; the error lines are torch's, in English.
ERROR_CAUSES = [
    (("must be a 3D tensor", "batch1 must be", "batch2 must be"), "cause_bmm_3d"),
    (("doesn't match the broadcast shape",), "cause_in_place_small"),
    (
        (
            "expected scalar type",
            "to have the same dtype",
            "same dtype",
            "dtype mismatch",
            "found Double",
            "found Float",
            "found Half",
            "found BFloat16",
        ),
        "cause_dtype_mix",
    ),
    (
        (
            "mat1 and mat2 shapes cannot be multiplied",
            "same reduction dim",
            "Expected size for first two dimensions",
            "size mismatch",
            "shapes cannot be multiplied",
        ),
        "cause_matmul_operand",
    ),
    (("must match the size of tensor", "Attempting to broadcast a dimension"), "cause_broadcast"),
    (("Dimension out of range",), "cause_axis_from_front"),
    (("cannot be called on meta tensors", "Cannot copy out of meta tensor", "meta tensors"), "cause_values_in_python"),
    (
        ("Can't call numpy() on Tensor that requires grad", "to numpy", "numpy()", "unsupported ScalarType"),
        "cause_numpy_round_trip",
    ),
    (("cannot be converted to type",), "cause_fill_overflow"),
    (
        (
            "is not on the expected device",
            "Expected all tensors to be on the same device",
            "device type",
            "on the same device",
        ),
        "cause_no_device",
    ),
    (
        ("leaf Variable that requires grad is being used in an in-place operation", "modified by an inplace operation"),
        "cause_in_place",
    ),
]


def error_hint(error):
    """A likely cause for an error line the worker reported (or None)."""
    for needles, cause in ERROR_CAUSES:
        if any(n in error for n in needles):
            return Msg(cause)
    return None


def shape_cause(got, want):
    """A likely cause for a tensor of shape `got` where `want` was expected (or None)."""
    if (
        len(got) == len(want) - 1
        and len(want) >= 3
        and got[0] == want[0] * want[1]
        and tuple(got[1:]) == tuple(want[2:])
    ):
        return Msg("cause_axes_folded")
    if len(got) == len(want) and sorted(got) == sorted(want):
        return Msg("cause_axes_swapped")
    if len(got) == len(want) + 1 and 1 in got:
        return Msg("cause_singleton_axis")
    if len(got) > len(want):
        return Msg("cause_silent_broadcasting")
    return None


def weights_hint(got, expected, mask=None):
    """A likely cause for attention weights that differ from the reference."""
    g, e = got.detach().double(), expected.detach().double()
    # a sum of weights is 1 to within its rounding: float16 and bfloat16 lose that much per weight
    eps = torch.finfo(got.dtype).eps if got.is_floating_point() else 0.0
    sum_tol = max(1e-3, (g.shape[-1] if g.dim() else 1) * eps)
    if torch.isnan(g).any():
        if mask is not None and (~mask.expand_as(g)).all(-1).any():
            return dead_rows_cause(g, ~mask.cpu().expand_as(g).any(-1))
        return Msg("cause_nan_overflow")
    if g.dim() >= 2:
        sums_last = g.sum(-1)
        sums_prev = g.sum(-2)
        if not torch.allclose(sums_last, e.sum(-1), atol=sum_tol) and torch.allclose(
            sums_prev, torch.ones_like(sums_prev), atol=sum_tol
        ):
            return Msg("cause_columns_sum_to_one")
        if g.shape[-1] == g.shape[-2] and torch.allclose(g.transpose(-1, -2), e, atol=1e-4):
            return Msg("cause_weights_transposed")
    m = mask.cpu().expand_as(g) if mask is not None else torch.ones_like(g, dtype=torch.bool)
    if g.dim() >= 1 and g.shape[-1] > 1:
        n = m.sum(-1, keepdim=True)
        uniform = torch.where(m, 1.0 / n.clamp(min=1).double(), torch.zeros_like(g))
        live = m.any(-1)
        if (
            live.any()
            and torch.allclose(g[live], uniform[live], atol=1e-6)
            and not torch.allclose(e[live], uniform[live], atol=1e-3)
        ):
            return Msg("cause_uniform_weights")
    if mask is not None:
        dead = ~m.any(-1)  # rows with no allowed key
        if dead.any() and g[dead].abs().max() > 0 and (g[~dead] - e[~dead]).abs().max() < 1e-4:
            return dead_rows_cause(g, dead) or Msg("cause_dead_row_nonzero")
        leak = g[~m].abs()
        if leak.numel() and leak.max() > 0:
            inside = g[m].abs()
            if inside.numel() and inside.max() < 1e-6:
                return Msg("cause_polarity_where_false")
            return Msg("cause_masked_keys_leak")
        allowed = m.any(-1)
        rows = g.sum(-1)
        if allowed.any() and not torch.allclose(rows[allowed], torch.ones_like(rows[allowed]), atol=sum_tol):
            return Msg("cause_not_renormalised")
    rows = g.sum(-1)
    if not torch.allclose(rows, e.sum(-1), atol=sum_tol):
        return Msg("cause_not_softmax_last")
    return None


def dead_rows_cause(weights, dead, unmasked=None, cfg=None, masked=None):
    """A likely cause for rows with no allowed key (`dead`: a bool tensor over
    weights.shape[:-1]) that are not all zero, from what those rows hold.
    `unmasked`: the reference's weights for the same call without a mask (with the
    judge's `cfg`, which its comparison's tolerance comes from); `masked`: with it (an
    additive mask is named only where it reproduces every row: the others right)."""
    w = weights.detach().double().cpu()
    dead = dead.cpu().expand(w.shape[:-1])
    rows = w[dead]
    if rows.numel() == 0:
        return None
    if torch.isnan(rows).any():
        return Msg("cause_dead_nan")
    if unmasked is not None and compare.matches(weights, unmasked.expand(w.shape), cfg):
        return mask_ignored()
    T = rows.shape[-1]
    if torch.allclose(rows, torch.full_like(rows, 1.0 / T), atol=1e-3):
        return Msg("cause_dead_uniform")
    if unmasked is not None and masked is not None:
        plain, right = (x.detach().double().cpu().expand(w.shape) for x in (unmasked, masked))
        if not torch.isnan(w).any() and torch.allclose(w, torch.where(dead.unsqueeze(-1), plain, right), atol=1e-4):
            return Msg("cause_dead_additive_mask")
    return None

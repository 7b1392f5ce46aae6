"""What the scaled_dot_product suites share: exact checks for boolean masks, and the
by-hand question's instance and answers (`by_hand_instance`, `by_hand_answers`: the
suite grades with them; the audit fills the reference notebook's by-hand cell with them).

Masks are compared exactly (no tolerance: grading.yml has none for bool). A
failure names the call, the shape/dtype/device that came back against the
expected ones, how many entries differ and the first index, and a likely
cause when the returned mask is a known variant of the expected one
(transposed, inverted, shifted by one). It never prints the mask itself.
"""

import math

import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.solutions import scaled_dot_product as ref
from autograder.private.suites import calls, causes, failing, value_checks
from autograder.protocol import wire


def by_hand_instance(question="by_hand"):
    """(query (1, d_k), key (T_k, d_k), value (T_k, d_v)) of solutions' BY_HAND, float64."""
    spec = ref.BY_HAND[question]
    return tuple(torch.tensor(spec[n], dtype=torch.float64) for n in ("query", "key", "value"))


def by_hand_answers(question="by_hand"):
    """{"scores": (T_k,), "weights": (T_k,), "output": (d_v,)}: the answers, from the reference."""
    q, k, v = by_hand_instance(question)
    output, weights = ref.scaled_dot_product_attention(q, k, v)
    return {"scores": (q @ k.T / math.sqrt(q.shape[-1]))[0], "weights": weights[0], "output": output[0]}


def check_mask(got, expected, what, device="cpu", variants=(), shape_hint=None):
    """`got` is a bool tensor on `device` equal to `expected` (values skipped on meta).

    `variants` is a list of (cause, tensor), causes rendered from the catalog:
    when the returned mask equals one of them, its cause is the likely cause. `shape_hint(got_shape, expected_shape)`
    may name a likely cause for a wrong shape.
    """
    calls.tensor(got, what)
    if tuple(got.shape) != tuple(expected.shape):
        g_shape, e_shape = tuple(got.shape), tuple(expected.shape)
        cause = shape_hint(g_shape, e_shape) if shape_hint else None
        failing.fail(
            failing.caused(
                t("shape_differs", what=what, got=g_shape, expected=e_shape),
                cause or causes.shape_cause(g_shape, e_shape),
                ". ",
            )
        )
    if got.dtype != torch.bool:
        failing.fail(
            failing.caused(
                t("mask_dtype_differs", what=what, got=wire.dtype_name(got.dtype)), Msg("cause_mask_number_dtype")
            )
        )
    if not value_checks.same_device(value_checks.device_of(got), device):
        failing.fail(
            failing.caused(
                t("mask_device_differs", what=what, got=value_checks.device_of(got), expected=device),
                Msg("cause_no_device_short"),
            )
        )
    if str(device) == "meta":
        return
    g, e = got.cpu(), expected.cpu()
    wrong = g != e
    if wrong.any():
        first = value_checks._index(int(wrong.reshape(-1).nonzero()[0]), tuple(g.shape))
        message = t(
            "mask_entries_differ", what=what, n=int(wrong.sum()), total=g.numel(), index=first, value=bool(g[first])
        )
        for cause, v in variants:
            if v.shape == g.shape and torch.equal(g, v.cpu()):
                message = failing.caused(message, cause, ". ")
                break
        failing.fail(message)

"""What the scaled_dot_product suites share: exact checks for boolean masks.

Masks are compared exactly (no tolerance: grading.yml has none for bool). A
failure names the call, the shape/dtype/device that came back against the
expected ones, how many entries differ and the first index, and a likely
cause when the returned mask is a known variant of the expected one
(transposed, inverted, shifted by one). It never prints the mask itself.
"""
import torch

from autograder.messages import t
from autograder.private.suites import checks as c


def check_mask(got, expected, what, device="cpu", variants=(), shape_hint=None):
    """`got` is a bool tensor on `device` equal to `expected` (values skipped on meta).

    `variants` is a list of (cause, tensor), causes rendered from the catalog:
    when the returned mask equals one of them, its cause is the likely cause. `shape_hint(got_shape, expected_shape)`
    may name a likely cause for a wrong shape.
    """
    c.tensor(got, what)
    if tuple(got.shape) != tuple(expected.shape):
        g_shape, e_shape = tuple(got.shape), tuple(expected.shape)
        cause = shape_hint(g_shape, e_shape) if shape_hint else None
        c.fail(t("shape_differs", what=what, got=g_shape, expected=e_shape)
               + (c.caused("", cause, ". ") if cause else c.shape_hint(g_shape, e_shape)))
    if got.dtype != torch.bool:
        c.fail(c.caused(t("mask_dtype_differs", what=what, got=c.wire.dtype_name(got.dtype)),
                        t("cause_mask_number_dtype")))
    if not c.same_device(c.device_of(got), device):
        c.fail(c.caused(t("mask_device_differs", what=what, got=c.device_of(got), expected=device),
                        t("cause_no_device_short")))
    if str(device) == "meta":
        return
    g, e = got.cpu(), expected.cpu()
    wrong = g != e
    if wrong.any():
        first = c._index(int(wrong.reshape(-1).nonzero()[0]), tuple(g.shape))
        message = t("mask_entries_differ", what=what, n=int(wrong.sum()), total=g.numel(), index=first,
                    value=bool(g[first]))
        for cause, v in variants:
            if v.shape == g.shape and torch.equal(g, v.cpu()):
                message = c.caused(message, cause, ". ")
                break
        c.fail(message)

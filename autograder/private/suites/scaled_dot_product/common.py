"""What the scaled_dot_product suites share: exact checks for boolean masks.

Masks are compared exactly (no tolerance: grading.yml has none for bool). A
failure names the call, the shape/dtype/device that came back against the
expected ones, how many entries differ and the first index, and a likely
cause when the returned mask is a known variant of the expected one
(transposed, inverted, shifted by one). It never prints the mask itself.
"""
import torch

from autograder.private.suites import checks as c


def check_mask(got, expected, what, device="cpu", variants=(), shape_hint=None):
    """`got` is a bool tensor on `device` equal to `expected` (values skipped on meta).

    `variants` is a list of (label, tensor): when the returned mask equals one
    of them, its label is the likely cause. `shape_hint(got_shape, expected_shape)`
    may name a likely cause for a wrong shape.
    """
    c.tensor(got, what)
    if tuple(got.shape) != tuple(expected.shape):
        cause = shape_hint(tuple(got.shape), tuple(expected.shape)) if shape_hint else None
        c.fail(f"{what}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
               + (f". Likely cause: {cause}" if cause else c.shape_hint(tuple(got.shape), tuple(expected.shape))))
    if got.dtype != torch.bool:
        c.fail(f"{what}: dtype {c.wire.dtype_name(got.dtype)}, expected bool. Likely cause: the mask was built "
               "with ones/zeros of a number dtype (add dtype=torch.bool, or build it with a comparison).")
    if not c.same_device(c.device_of(got), device):
        c.fail(f"{what}: on device {c.device_of(got)}, expected {device}. "
               "Likely cause: a tensor created without device= (it lands on the CPU).")
    if str(device) == "meta":
        return
    g, e = got.cpu(), expected.cpu()
    wrong = g != e
    if wrong.any():
        first = c._index(int(wrong.reshape(-1).nonzero()[0]), tuple(g.shape))
        message = (f"{what}: {int(wrong.sum())} of {g.numel()} entries differ from the expected mask; "
                   f"the first at index {first} is {bool(g[first])}")
        for label, v in variants:
            if v.shape == g.shape and torch.equal(g, v.cpu()):
                message += f". Likely cause: {label}"
                break
        c.fail(message)

"""Hidden tests: causal_mask(seq_len, device=None)."""
import torch

from autograder.private.suites import checks as c
from autograder.private.suites.scaled_dot_product.common import check_mask
from autograder.private.solutions import scaled_dot_product as ref

QUESTION = "causal_mask"
NAME = "causal_mask"
LENGTHS = [5, 2, 8, 1]  # the most telling size first: its failure message names the cause


def _variants(T):
    ones = torch.ones(T, T, dtype=torch.bool)
    return [
        ("every entry False, the diagonal too: True must mean 'may attend', and query t may attend to keys "
         "0 .. t (tril with diagonal=0).", torch.zeros(T, T, dtype=torch.bool)),
        ("True above the diagonal: triu instead of tril? Query t may attend to keys 0 .. t.", ones.triu()),
        ("the diagonal is False: a position must be allowed to attend to itself (tril with diagonal=0).",
         ones.tril(-1)),
        ("True strictly above the diagonal: that marks the positions to hide; "
         "True must mean 'may attend' (tril, not ~tril or triu(1)).", ones.triu(1)),
        ("True above the diagonal as well: triu/tril with the wrong diagonal offset?", ones.tril(1)),
        ("every entry True: the mask hides nothing.", ones),
    ]


def _check(sub, T, on="cpu", **kwargs):
    """causal_mask(T, **kwargs) is the expected mask, on the device `on`."""
    what = c.describe_call(NAME, [T], kwargs)
    reply = c.call(sub, NAME, [T], kwargs)
    check_mask(reply.value, ref.causal_mask(T), what, on, _variants(T))


def test_shape_dtype_and_values(sub):
    for T in LENGTHS:
        _check(sub, T)


def test_device_argument(sub, device):
    """`device` is honoured (passed by keyword, as the contract names it): the mask is built there."""
    _check(sub, 6, device, device=device)

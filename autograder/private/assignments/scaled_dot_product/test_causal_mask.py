"""Hidden tests: causal_mask(seq_len, device=None)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.private.assignments.scaled_dot_product.common import check_mask
from autograder.private.solutions import scaled_dot_product as ref
from autograder.private.suites import calls

QUESTION = "causal_mask"
NAME = "causal_mask"
LENGTHS = [5, 2, 8, 1]  # the most telling size first: its failure message names the cause


def _variants(T):
    ones = torch.ones(T, T, dtype=torch.bool)
    return [
        (Msg("cause_causal_all_false"), torch.zeros(T, T, dtype=torch.bool)),
        (Msg("cause_causal_triu"), ones.triu()),
        (Msg("cause_causal_no_diagonal"), ones.tril(-1)),
        (Msg("cause_causal_marks_hidden"), ones.triu(1)),
        (Msg("cause_causal_offset"), ones.tril(1)),
        (Msg("cause_causal_all_true"), ones),
    ]


def _check(sub, T, on="cpu", **kwargs):
    """causal_mask(T, **kwargs) is the expected mask, on the device `on`."""
    what = calls.describe_call(NAME, [T], kwargs)
    reply = calls.call(sub, NAME, [T], kwargs)
    check_mask(reply.value, ref.causal_mask(T), what, on, _variants(T))


def test_shape_dtype_and_values(sub):
    for T in LENGTHS:
        _check(sub, T)


@pytest.mark.property
def test_device_argument(sub, device):
    """`device` is honoured (passed by keyword, as the contract names it): the mask is built there."""
    _check(sub, 6, device, device=device)

"""Likely causes that fit the code: the shared checks name a cause only where its own
recomputation reproduces what the student's code returned, never from a pattern that
another mistake also leaves (issue 36, item 3)."""

import pytest
import torch

from autograder import config
from autograder.judge.failure import Failure
from autograder.private.solutions.classic_attention import masked_softmax
from autograder.private.suites import causes, tensors, value_checks
from conftest import ROOT


@pytest.fixture
def cfg():
    return config.load(ROOT / "grading.yml")


def _case():
    scores = tensors.randn((4, 5), 1)
    mask = tensors.rand_mask((4, 5), 2)
    mask[1] = False  # a row with no allowed key
    return scores, mask, ~mask.any(-1)


def test_an_additive_mask_is_named_only_where_it_reproduces_every_row(cfg):
    """A row with no allowed key holding the unmasked softmax is what an additive mask
    leaves, and also what a masked_fill with its polarity inverted leaves: only the first
    has every other row right."""
    scores, mask, dead = _case()
    unmasked, masked = masked_softmax(scores), masked_softmax(scores, mask)
    additive = torch.softmax(scores - 1e9 * (~mask).double(), -1)
    inverted = masked_softmax(scores, ~mask).where(~dead[:, None], unmasked)
    assert causes.dead_rows_cause(additive, dead, unmasked, cfg, masked).key == "cause_dead_additive_mask"
    assert causes.dead_rows_cause(inverted, dead, unmasked, cfg, masked) is None
    assert causes.dead_rows_cause(additive, dead, unmasked, cfg) is None  # nothing to recompute it with: no cause


def test_a_float32_detour_is_named_at_float32_rounding_only(cfg):
    """float64 outputs that went through float32 carry float32's rounding; numbers typed to four
    decimals are within float32's tolerance too, but far beyond its rounding: no cause."""
    want = masked_softmax(tensors.randn((3, 4), 3))

    def cause(got):
        with pytest.raises(Failure) as failed:
            value_checks.assert_close(got, want, "weights", cfg)
        return failed.value.cause

    float32_rounding = want * (1 + 4 * torch.finfo(torch.float32).eps)  # a few units in float32's last place
    assert cause(float32_rounding).key == "cause_float32_detour"
    assert cause(want.round(decimals=4)) is None

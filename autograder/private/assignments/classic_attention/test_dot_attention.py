"""Hidden tests: dot_attention (Luong dot)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.assignments.classic_attention import family
from autograder.private.assignments.classic_attention.family import OUT, hints, inputs, shape_hints  # noqa: F401
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import properties, tensors, value_checks

QUESTION = "dot_attention"
SPEC = {"name": "dot_attention", "ref": ref.dot_attention, "params": lambda d_s, d_h, d_attn, seed: [], "square": True}


def _alternatives(s, H):
    """(likely cause, scores) of the usual mistakes, from the inputs (for the failure message only)."""
    scores = (H @ s.unsqueeze(-1)).squeeze(-1)
    d = s.shape[-1]
    return [(Msg("cause_dot_divided_sqrt_d"), scores / d**0.5), (Msg("cause_dot_divided_d"), scores / d)]


SPEC["alternatives"] = _alternatives


def test_value_error_when_sizes_differ(sub, cfg):
    s = tensors.randn((3, 4), 1000)
    H = tensors.randn((3, 5, 6), 1001)
    properties.expect_value_error(sub, "dot_attention", [s, H], why=t("why_sizes_differ", d_s=4, d_h=6))
    # and it still works when they match
    value_checks.check_runs(sub, cfg, "dot_attention", [tensors.randn((3, 6), 1002), H], {}, ref.dot_attention, OUT)


def test_worked_example_unscaled(sub, cfg):
    """Luong dot is not scaled: larger states give sharper weights."""
    s = tensors.randn((2, 8), 1010, scale=3.0)
    H = tensors.randn((2, 6, 8), 1011, scale=3.0)
    value_checks.check_values(
        sub,
        cfg,
        "dot_attention",
        [s, H],
        {},
        ref.dot_attention,
        OUT,
        hints={"weights": lambda g, e: _scale_hint(g, s, H)},
    )


def _scale_hint(got, s, H):
    scores = (H.double() @ s.double().unsqueeze(-1)).squeeze(-1)
    for cause, factor in (("cause_dot_divided_sqrt_d", 8**-0.5), ("cause_dot_divided_d", 1 / 8)):
        if torch.allclose(got.double(), torch.softmax(scores * factor, -1), atol=1e-6):
            return Msg(cause)
    return None


# -- the checks every classic attention function is held to (family.py) --


def test_shapes_and_values(sub, cfg):
    family.shapes_and_values(sub, cfg, SPEC)


def test_padding(sub, cfg):
    family.padding(sub, cfg, SPEC)


def test_fully_masked_rows(sub, cfg):
    family.fully_masked_rows(sub, cfg, SPEC)


def test_gradients(sub, cfg):
    family.gradients(sub, cfg, SPEC)


def test_dtype_and_device(sub, cfg, dd):
    family.dtype_and_device(sub, cfg, SPEC, dd)


@pytest.mark.property
def test_meta_device(sub, cfg):
    family.meta_device(sub, cfg, SPEC)


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    family.inputs_unchanged(sub, cfg, SPEC)


@pytest.mark.property
def test_vectorised(sub, cfg):
    family.vectorised(sub, cfg, SPEC)

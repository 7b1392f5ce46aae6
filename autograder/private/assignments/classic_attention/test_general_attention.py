"""Hidden tests: general_attention (Luong general)."""

import math

import pytest

from autograder.judge.failure import Msg
from autograder.private.assignments.classic_attention import family
from autograder.private.assignments.classic_attention.family import OUT, hints, inputs, shape_hints  # noqa: F401
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import tensors

QUESTION = "general_attention"
SPEC = {
    "name": "general_attention",
    "ref": ref.general_attention,
    "params": lambda d_s, d_h, d_attn, seed: [tensors.randn((d_s, d_h), seed, scale=0.5)],  # W (d_s, d_h)
}


def _alternatives(s, H, W):
    """(likely cause, scores) of the usual mistakes, from the inputs (for the failure message only)."""
    out = []
    if s.shape[-1] == H.shape[-1]:
        out += [
            (Msg("cause_general_w_transposed"), ((H @ W) * s.unsqueeze(1)).sum(-1)),
            (Msg("cause_general_no_w"), (H * s.unsqueeze(1)).sum(-1)),
        ]
    d = s.shape[-1]
    out.append((Msg("cause_general_scaled"), ((H @ W.T) * s.unsqueeze(1)).sum(-1) / math.sqrt(d)))
    return out


SPEC["alternatives"] = _alternatives


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

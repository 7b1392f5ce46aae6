"""Hidden tests: concat_attention (Luong concat)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.private.assignments.classic_attention import family
from autograder.private.assignments.classic_attention.family import OUT, hints, inputs, shape_hints  # noqa: F401
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import tensors

QUESTION = "concat_attention"
SPEC = {
    "name": "concat_attention",
    "ref": ref.concat_attention,
    # W_a (d_attn, d_s + d_h), the decoder state's columns first; v_a (d_attn,)
    "params": lambda d_s, d_h, d_attn, seed: [
        tensors.randn((d_attn, d_s + d_h), seed),
        tensors.randn((d_attn,), seed + 1),
    ],
}


def _alternatives(s, H, W_a, v_a):
    """(likely cause, scores) of the usual mistakes, from the inputs (for the failure message only)."""
    B, T, _ = H.shape
    s_t = s.unsqueeze(1).expand(B, T, s.shape[-1])
    sh = torch.cat([s_t, H], dim=-1) @ W_a.T
    return [
        (Msg("cause_concat_order"), torch.tanh(torch.cat([H, s_t], dim=-1) @ W_a.T) @ v_a),
        (Msg("cause_concat_no_tanh"), sh @ v_a),
        (Msg("cause_tanh_summed"), torch.tanh(sh).sum(-1)),
    ]


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

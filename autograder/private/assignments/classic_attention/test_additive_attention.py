"""Hidden tests: additive_attention (Bahdanau)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.private.assignments.classic_attention import family
from autograder.private.assignments.classic_attention.family import OUT, hints, inputs, shape_hints  # noqa: F401
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import tensors, value_checks

QUESTION = "additive_attention"
SPEC = {
    "name": "additive_attention",
    "ref": ref.additive_attention,
    # W_a (d_attn, d_s), U_a (d_attn, d_h), v_a (d_attn,)
    "params": lambda d_s, d_h, d_attn, seed: [
        tensors.randn((d_attn, d_s), seed),
        tensors.randn((d_attn, d_h), seed + 1),
        tensors.randn((d_attn,), seed + 2),
    ],
}


def _alternatives(s, H, W_a, U_a, v_a):
    """(likely cause, scores) of the usual mistakes, from the inputs (for the failure message only)."""
    q = (s @ W_a.T).unsqueeze(1)  # (B, 1, d_attn)
    k = H @ U_a.T  # (B, T, d_attn)
    out = [
        (Msg("cause_additive_no_tanh"), (q + k) @ v_a),
        (Msg("cause_additive_relu"), torch.relu(q + k) @ v_a),
        (Msg("cause_additive_sigmoid"), torch.sigmoid(q + k) @ v_a),
        (Msg("cause_tanh_summed"), torch.tanh(q + k).sum(-1)),
    ]
    if s.shape[-1] == H.shape[-1]:
        out.append((Msg("cause_additive_swapped"), torch.tanh((s @ U_a.T).unsqueeze(1) + H @ W_a.T) @ v_a))
    return out


SPEC["alternatives"] = _alternatives


def test_equal_state_sizes(sub, cfg):
    """d_s == d_h (d_attn different): W_a and U_a swapped would run here, so it must show in the values."""
    for k, size in enumerate(((3, 5, 6, 6, 4), (4, 4, 5, 5, 3))):
        for masked in (False, True):
            args, kwargs = inputs(SPEC, *size, seed=250 + 10 * k, mask=masked)
            value_checks.check_values(
                sub,
                cfg,
                SPEC["name"],
                args,
                kwargs,
                SPEC["ref"],
                OUT,
                hints=hints(SPEC, args, kwargs, cfg),
                shape_hints=shape_hints(args),
            )


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

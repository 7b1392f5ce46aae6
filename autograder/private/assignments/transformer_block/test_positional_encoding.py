"""Hidden tests: positional_encoding(seq_len, d_model, device=None, dtype=None) -> (T, D):
PE[t, 2i] = sin(t / 10000^(2i / D)), PE[t, 2i + 1] = cos(t / 10000^(2i / D)), interleaved.

The yardstick is the float64 formula (the reference in float64); the student's
function returns torch's default dtype (float32) when `dtype` is None, within
float32's tolerance of it, and the `dtype` asked (a torch.dtype, which the wire
carries) within that dtype's tolerance.
"""

import math

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.assignments.transformer_block import common
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import calls, compare, properties, value_checks
from autograder.protocol import wire

QUESTION = "positional_encoding"
NAME = "positional_encoding"
OUT = ("pe",)
# (T, D): the most telling first; one position; T < D; long (angles of 100 rad and more: float32 holds them)
SIZES = [(9, 8), (1, 6), (4, 16), (128, 32), (50, 2)]


def ref_fn(seq_len, d_model, device=None):
    return ref.positional_encoding(seq_len, d_model, dtype=torch.float64)


def hints(T, D, cfg):
    return {"pe": lambda g, e: common.first_match(g, common.pe_alternatives(g, T, D), cfg)}


def test_worked_example(sub, cfg):
    """D = 4: PE[1] = [sin 1, cos 1, sin 0.01, cos 0.01], as the contract works it out."""
    value_checks.check_values(sub, cfg, NAME, [2, 4], {}, ref_fn, OUT, dtype=torch.float32, hints=hints(2, 4, cfg))


def test_shapes_and_values(sub, cfg):
    """Several lengths and sizes, up to T = 128 (float32 within its tolerance of the float64 formula)."""
    for T, D in SIZES:
        value_checks.check_values(sub, cfg, NAME, [T, D], {}, ref_fn, OUT, dtype=torch.float32, hints=hints(T, D, cfg))


def test_interleaved(sub, cfg):
    """Each pair of features 2i, 2i + 1 holds the sine and the cosine of one angle: sin^2 + cos^2 = 1."""
    T, D = 7, 10
    got, _ = value_checks.check_runs(sub, cfg, NAME, [T, D], {}, ref_fn, OUT, dtype=torch.float32)
    pe = got["pe"].double()
    norms = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2
    value_checks.assert_close(
        norms,
        torch.ones_like(norms),
        t("tb_pe_pairs", what=calls.describe_call(NAME, [T, D])),
        cfg,
        torch.float32,
        hint=lambda g, e: hints(T, D, cfg)["pe"](got["pe"], None),
    )


@pytest.mark.property
def test_device_argument(sub, cfg, device):
    """`device` is honoured (passed by keyword, as the contract names it): the encoding is built there."""
    kwargs = {"device": device}
    what = calls.describe_call(NAME, [6, 8], kwargs)
    got = calls.outputs(calls.call(sub, NAME, [6, 8], kwargs).value, what, OUT)
    value_checks.check_meta(got["pe"], f"{what} -> pe", (6, 8), torch.float32, device)
    if device != "meta":
        value_checks.check_plausible(got, {"pe": ref_fn(6, 8)}, what)


def test_dtype_and_device(sub, cfg, dd):
    """`dtype` and `device` passed by keyword: the encoding in that dtype, there, within the
    dtype's tolerance of the float64 formula, up to T = 300 (the contract computes the angles
    in float32 or float64 and casts at the end: float16 holds the numbers from 256 to 512
    only a quarter apart, so angles computed in it are off by up to 0.125 rad there)."""
    device, dtype = dd
    for T, D in ((9, 8), (300, 8)):
        kwargs = {"device": device, "dtype": dtype}
        what = calls.describe_call(NAME, [T, D], {"device": device, "dtype": wire.dtype_name(dtype)})
        got = calls.outputs(calls.call(sub, NAME, [T, D], kwargs).value, what, OUT)
        value_checks.check_meta(got["pe"], f"{what} -> pe", (T, D), dtype, device)
        value_checks.assert_close(
            got["pe"], ref_fn(T, D), f"{what} -> pe", cfg, dtype, hint=_dtype_hint(T, D, dtype, cfg), compared="dtype"
        )


def _angles_in(T, D, dtype):
    """The encoding with its angles computed in `dtype` itself (the mistake the contract warns of)."""
    positions = torch.arange(T, dtype=dtype)  # (T,)
    inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, D, 2, dtype=dtype) / D)  # (D / 2,)
    angles = positions[:, None] * inv_freq[None, :]  # (T, D / 2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)[:, :D]


def _dtype_hint(T, D, dtype, cfg):
    def hint(got, expected):
        if dtype in (torch.float16, torch.bfloat16) and compare.matches(got, _angles_in(T, D, dtype), cfg):
            return Msg("cause_tb_pe_angles_in_dtype", dtype=wire.dtype_name(dtype))
        return hints(T, D, cfg)["pe"](got, expected)

    return hint


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the positions or the features."""
    value_checks.check_runs(sub, cfg, NAME, [4, 8], {}, ref_fn, OUT, dtype=torch.float32)
    properties.check_vectorised(sub, NAME, lambda n: ([n, 8], {}), (4, 10, 16), "sequence_length")
    properties.check_vectorised(sub, NAME, lambda d: ([4, d], {}), (8, 16, 24), "rows")

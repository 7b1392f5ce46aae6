"""Hidden tests: positional_encoding(seq_len, d_model, device=None, dtype=None) -> (T, D):
PE[t, 2i] = sin(t / 10000^(2i / D)), PE[t, 2i + 1] = cos(t / 10000^(2i / D)), interleaved.

The yardstick is the float64 formula (the reference in float64); the student's
function returns torch's default dtype (float32) when `dtype` is None, within
float32's tolerance of it. The `dtype` argument cannot be sent here (the wire
carries tensors, numbers and text, not a torch.dtype): the student's
TransformerLM exercises it in every dtype (test_transformer_lm.py).
"""

import pytest
import torch

from autograder.messages import t
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import checks as c
from autograder.private.suites.transformer_block import common

QUESTION = "positional_encoding"
NAME = "positional_encoding"
OUT = ("pe",)
# (T, D): the most telling first; one position; T < D; long (angles of 100 rad and more: float32 holds them)
SIZES = [(9, 8), (1, 6), (4, 16), (128, 32), (50, 2)]


def ref_fn(seq_len, d_model, device=None):
    return ref.positional_encoding(seq_len, d_model, dtype=torch.float64)


def hints(T, D):
    alts = [(common.pe_cause(how), common.sinusoid(T, D, how)) for how in common.PE_MISTAKES]
    return {"pe": lambda g, e: common.first_match(g, alts)}


def test_worked_example(sub, cfg):
    """D = 4: PE[1] = [sin 1, cos 1, sin 0.01, cos 0.01], as the contract works it out."""
    c.check_values(sub, cfg, NAME, [2, 4], {}, ref_fn, OUT, dtype=torch.float32, hints=hints(2, 4))


def test_shapes_and_values(sub, cfg):
    """Several lengths and sizes, up to T = 128 (float32 within its tolerance of the float64 formula)."""
    for T, D in SIZES:
        c.check_values(sub, cfg, NAME, [T, D], {}, ref_fn, OUT, dtype=torch.float32, hints=hints(T, D))


def test_interleaved(sub, cfg):
    """Each pair of features 2i, 2i + 1 holds the sine and the cosine of one angle: sin^2 + cos^2 = 1."""
    T, D = 7, 10
    got, _ = c.check_runs(sub, cfg, NAME, [T, D], {}, ref_fn, OUT, dtype=torch.float32)
    pe = got["pe"].double()
    norms = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2
    c.assert_close(
        norms,
        torch.ones_like(norms),
        t("tb_pe_pairs", what=c.describe_call(NAME, [T, D])),
        cfg,
        torch.float32,
        hint=lambda g, e: hints(T, D)["pe"](got["pe"], None) or t("cause_tb_pe_concat"),
    )


@pytest.mark.property
def test_device_argument(sub, cfg, device):
    """`device` is honoured (passed by keyword, as the contract names it): the encoding is built there."""
    kwargs = {"device": device}
    what = c.describe_call(NAME, [6, 8], kwargs)
    got = c.outputs(c.call(sub, NAME, [6, 8], kwargs).value, what, OUT)
    c.check_meta(got["pe"], f"{what} -> pe", (6, 8), torch.float32, device)
    if device != "meta":
        c.check_plausible(got, {"pe": ref_fn(6, 8)}, what)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the positions or the features."""
    c.check_runs(sub, cfg, NAME, [4, 8], {}, ref_fn, OUT, dtype=torch.float32)
    c.check_vectorised(sub, NAME, ([4, 8], {}), ([16, 8], {}), "sequence_length")
    c.check_vectorised(sub, NAME, ([4, 8], {}), ([4, 24], {}), "rows")

"""Hidden tests: split_heads(x, n_heads): (B, T, D) -> (B, n_heads, T, D // n_heads)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.solutions import multi_head as ref
from autograder.private.suites import compare, dtypes, grads, properties, tensors, value_checks

QUESTION = "split_heads"
NAME = "split_heads"
OUT = ("heads",)
# (B, T, D, n_heads): all distinct; B == T; n_heads == T (a missing transpose keeps the shape); 1 head; D heads.
SIZES = [(2, 3, 20, 4), (4, 4, 6, 3), (2, 5, 15, 5), (3, 2, 7, 1), (2, 3, 8, 8)]


def hint(x, cfg):
    """A likely cause, from what the returned tensor holds (x: the input)."""

    def h(got, expected):
        B, T, D = x.shape
        n = expected.shape[1]
        d = D // n
        for cause, alt in (
            ("cause_split_view", x.reshape(B, n, T, d)),
            ("cause_split_no_transpose", x.reshape(B, T, n, d)),
            ("cause_split_interleaved", x.reshape(B, T, d, n).permute(0, 3, 1, 2)),
        ):
            if compare.matches(got, alt, cfg):
                return Msg(cause)
        return None

    return h


def values(sub, cfg, x, n_heads, **opts):
    return value_checks.check_values(
        sub, cfg, NAME, [x, n_heads], {}, ref.split_heads, OUT, hints={"heads": hint(x.double(), cfg)}, **opts
    )


def test_shapes_and_values(sub, cfg):
    for k, (B, T, D, h) in enumerate(SIZES):
        values(sub, cfg, tensors.randn((B, T, D), 100 + k), h)


def test_value_error_when_not_divisible(sub, cfg):
    value_checks.check_runs(sub, cfg, NAME, [tensors.randn((2, 3, 12), 150), 4], {}, ref.split_heads, OUT)
    for k, (D, h) in enumerate(((10, 4), (9, 2), (6, 4))):
        properties.expect_value_error(
            sub, NAME, [tensors.randn((2, 3, D), 151 + k), h], why=t("why_not_divisible", D=D, h=h)
        )


def test_gradients(sub, cfg):
    x = tensors.randn((2, 3, 20), 200)
    grads.check_grads(sub, cfg, NAME, [x, 4], {}, ref.split_heads, OUT, seed=201, hints={"heads": hint(x, cfg)})


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    x = tensors.randn((3, 5, 12), 300)
    dtypes.check_in_dtype(
        sub, cfg, NAME, [x, 4], {}, ref.split_heads, OUT, dtype, device, hints={"heads": hint(x, cfg)}
    )


@pytest.mark.property
def test_meta_device(sub, cfg):
    x = tensors.randn((3, 5, 12), 400)
    value_checks.check_runs(sub, cfg, NAME, [x, 3], {}, ref.split_heads, OUT, dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    x = tensors.randn((2, 4, 12), 500)
    value_checks.check_runs(sub, cfg, NAME, [x, 3], {}, ref.split_heads, OUT)
    properties.check_inputs_unchanged(sub, NAME, [x, 3])


@pytest.mark.property
def test_vectorised(sub, cfg):
    value_checks.check_runs(sub, cfg, NAME, [tensors.randn((2, 3, 12), 600), 4], {}, ref.split_heads, OUT)
    d = 3
    properties.check_vectorised(
        sub, NAME, lambda h: ([tensors.randn((2, 3, h * d), 600 + h), h], {}), (2, 4, 6), "heads"
    )
    properties.check_vectorised(sub, NAME, lambda b: ([tensors.randn((b, 3, 12), 610 + b), 4], {}), (2, 4, 6), "batch")

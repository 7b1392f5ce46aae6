"""Hidden tests: merge_heads(x): (B, n_heads, T, d_head) -> (B, T, n_heads * d_head), the inverse of split_heads."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.solutions import multi_head as ref
from autograder.private.suites import compare, dtypes, grads, properties, tensors, value_checks

QUESTION = "merge_heads"
NAME = "merge_heads"
OUT = ("merged",)
# (B, n_heads, T, d_head): all distinct; B == T; n_heads == T (a missing transpose keeps the shape); 1 head.
SIZES = [(2, 4, 3, 5), (4, 3, 4, 2), (2, 5, 5, 3), (3, 1, 2, 7), (2, 8, 3, 1)]


def hint(x, cfg):
    def h(got, expected):
        B, n, T, d = x.shape
        for cause, alt in (
            ("cause_merge_no_transpose", x.reshape(B, T, n * d)),
            ("cause_merge_interleaved", x.permute(0, 2, 3, 1).reshape(B, T, n * d)),
        ):
            if compare.matches(got, alt, cfg):
                return Msg(cause)
        return None

    return h


def values(sub, cfg, x, **opts):
    return value_checks.check_values(
        sub, cfg, NAME, [x], {}, ref.merge_heads, OUT, hints={"merged": hint(x.double(), cfg)}, **opts
    )


def test_shapes_and_values(sub, cfg):
    for k, shape in enumerate(SIZES):
        values(sub, cfg, tensors.randn(shape, 100 + k))


def test_inverse_of_split_heads(sub, cfg):
    """merge_heads(split_heads(x)) == x, split by the reference."""
    for k, (B, T, D, n) in enumerate(((2, 3, 20, 4), (3, 3, 6, 2))):
        x = tensors.randn((B, T, D), 150 + k)
        got, _ = values(sub, cfg, ref.split_heads(x, n))
        value_checks.assert_close(got["merged"], x, t("merge_of_split", name=NAME, n=n, shape=(B, T, D)), cfg)


def test_gradients(sub, cfg):
    x = tensors.randn((2, 4, 3, 5), 200)
    grads.check_grads(sub, cfg, NAME, [x], {}, ref.merge_heads, OUT, seed=201, hints={"merged": hint(x, cfg)})


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    x = tensors.randn((3, 4, 5, 2), 300)
    dtypes.check_in_dtype(sub, cfg, NAME, [x], {}, ref.merge_heads, OUT, dtype, device, hints={"merged": hint(x, cfg)})


@pytest.mark.property
def test_meta_device(sub, cfg):
    x = tensors.randn((3, 4, 5, 2), 400)
    value_checks.check_runs(sub, cfg, NAME, [x], {}, ref.merge_heads, OUT, dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    x = tensors.randn((2, 3, 4, 5), 500)
    value_checks.check_runs(sub, cfg, NAME, [x], {}, ref.merge_heads, OUT)
    properties.check_inputs_unchanged(sub, NAME, [x])


@pytest.mark.property
def test_vectorised(sub, cfg):
    value_checks.check_runs(sub, cfg, NAME, [tensors.randn((2, 4, 3, 5), 600)], {}, ref.merge_heads, OUT)
    properties.check_vectorised(sub, NAME, lambda h: ([tensors.randn((2, h, 3, 3), 600 + h)], {}), (2, 4, 6), "heads")
    properties.check_vectorised(sub, NAME, lambda b: ([tensors.randn((b, 4, 3, 3), 610 + b)], {}), (2, 4, 6), "batch")

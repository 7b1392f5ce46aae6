"""Hidden tests: FeedForward(d_model, d_ff) and its forward(x) = linear2(relu(linear1(x)))
on (..., D), the same at every position.

The worker builds the student's module and loads the judge's parameters into
linear1 and linear2 by name; the yardstick is the reference module with the
same parameters, in float64.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.private.assignments.transformer_block import common
from autograder.private.suites import tensors, value_checks

QUESTION = "feed_forward"
NAME = "FeedForward"
OUT = ("output",)
# (B, T, D, F): all different; B == T; one position; F < D
SIZES = [(3, 5, 8, 12), (4, 4, 6, 10), (2, 1, 5, 7), (2, 3, 10, 4)]


class Case(common.ModuleCase):
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("x",)

    def __init__(self, B, T, D, F, seed, scale=1.0, lead=None):
        self.lead = lead  # the input's leading axes ((B, T) by default)
        super().__init__({"B": B, "T": T, "D": D, "F": F}, seed, scale)

    def ctor(self):
        return [self.sizes["D"], self.sizes["F"]]

    def inputs(self, seed):
        s = self.sizes
        lead = self.lead if self.lead is not None else (s["B"], s["T"])
        return [tensors.randn((*lead, s["D"]), seed)], {}

    def at(self, sizes, seed):
        return Case(sizes["B"], sizes["T"], sizes["D"], sizes["F"], seed)


def hints(case, cfg):
    m = case.reference()
    (x,) = case.args
    with torch.no_grad():
        alts = [
            (Msg("cause_tb_gelu"), common.feed_forward(x, m, "gelu")),
            (Msg("cause_tb_gelu"), common.feed_forward(x, m, "gelu_tanh")),
            (Msg("cause_tb_no_activation"), common.feed_forward(x, m, "none")),
            (Msg("cause_tb_relu_after_linear2"), torch.relu(common.feed_forward(x, m))),
            (Msg("cause_tb_ffn_no_bias"), torch.relu(x @ m.linear1.weight.T) @ m.linear2.weight.T),
        ]
    return {"output": lambda g, e: common.first_match(g, alts, cfg)}


def test_parameters(sub, cfg):
    """linear1 = nn.Linear(D, d_ff), linear2 = nn.Linear(d_ff, D): the names the judge loads by."""
    D, F = 8, 12
    want = {"linear1.weight": (F, D), "linear1.bias": (F,), "linear2.weight": (D, F), "linear2.bias": (D,)}
    common.check_parameters(sub, NAME, {"args": [D, F]}, want, f"FeedForward({D}, {F})")


def test_shapes_and_values(sub, cfg):
    """Several sizes, d_ff smaller and larger than D, 2-D and 4-D inputs (the same at every position)."""
    cases = [Case(*size, seed=100 + 10 * k) for k, size in enumerate(SIZES)]
    cases += [Case(*SIZES[0], seed=150, lead=(7,)), Case(*SIZES[1], seed=160, lead=(2, 3, 4))]
    for case in cases:
        common.values(sub, cfg, case, hints(case, cfg))


def test_float32(sub, cfg):
    """A float32 module keeps float32 and matches the reference within float32's tolerance."""
    case = Case(*SIZES[1], seed=200)
    got, what, _ = common.runs(sub, case, torch.float32)
    value_checks.check_outputs(got, case.expected(torch.float32), what, cfg, torch.float32, "cpu", hints(case, cfg))


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. x and every parameter."""
    common.check_param_grads(sub, cfg, Case(*SIZES[0], seed=300), 310)


def test_dtype_and_device(sub, cfg, dd):
    case = Case(*SIZES[0], seed=400, scale=0.7)
    common.in_dtype(sub, cfg, case, dd, hints(case, cfg))


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows tensors built on the CPU."""
    common.runs(sub, Case(*SIZES[0], seed=500), torch.float32, "meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=600)
    common.inputs_unchanged(sub, case)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the batch or the positions."""
    common.check_vectorised(
        sub,
        lambda B, T: Case(B, T, 6, 10, seed=700),
        NAME,
    )

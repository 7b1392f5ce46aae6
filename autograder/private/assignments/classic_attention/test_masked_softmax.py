"""Hidden tests: masked_softmax(scores, mask=None, dim=-1)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import calls, causes, compare, dtypes, failing, grads, properties, tensors, value_checks

QUESTION = "masked_softmax"
NAME = "masked_softmax"
OUT = ("weights",)
SHAPES = [(3, 5), (4, 4), (2, 3, 7), (2, 2, 3, 6)]


def _hints(cfg, mask=None, scores=None):
    """The weights' likely cause: a softmax over another axis when its recomputation (on
    `scores`, where given) reproduces them, else what the weights' pattern shows."""

    def h(g, e):
        for axis in range(scores.dim() - 1) if scores is not None else ():
            if compare.matches(g, ref.masked_softmax(scores, mask, dim=axis), cfg):
                return Msg("cause_dim_ignored", axis=axis, dim=-1)
        return causes.weights_hint(g, e, mask)

    return {"weights": h}


def test_values_and_row_sums(sub, cfg):
    for k, shape in enumerate(SHAPES):
        scores = tensors.randn(shape, 100 + k, scale=3.0)
        got, _ = value_checks.check_values(sub, cfg, NAME, [scores], {}, ref.masked_softmax, OUT, hints=_hints(cfg))
        sums = got["weights"].double().sum(-1)
        value_checks.assert_close(sums, torch.ones_like(sums), t("row_sums_for_shape", name=NAME, shape=shape), cfg)


def _dim_hint(dim):
    """A likely cause when the softmax is taken over another axis than `dim`."""

    def h(got, expected):
        g = got.detach().double().cpu()
        if torch.isnan(g).any():
            return None
        for axis in range(g.dim()):
            if axis != dim % g.dim() and torch.allclose(g.sum(axis), torch.ones(()).double(), atol=1e-3):
                return Msg("cause_dim_ignored", axis=axis, dim=dim)
        return None

    return h


def test_dim_argument(sub, cfg):
    scores = tensors.randn((3, 4, 5), 110, scale=2.0)
    for dim in (0, 1, -2):
        value_checks.check_values(
            sub, cfg, NAME, [scores], {"dim": dim}, ref.masked_softmax, OUT, hints={"weights": _dim_hint(dim)}
        )


def test_mask_broadcast_and_exact_zeros(sub, cfg):
    # same rank, a broadcast axis, and masks of lower rank than the scores (the contract: broadcastable)
    for k, (shape, mshape) in enumerate(
        [
            ((3, 6), (3, 6)),
            ((2, 4, 6), (2, 1, 6)),
            ((5, 5), (5, 5)),
            ((2, 4, 6), (4, 6)),
            ((2, 3, 5), (5,)),
            ((2, 2, 3, 6), (2, 1, 6)),
        ]
    ):
        scores = tensors.randn(shape, 120 + k, scale=2.0)
        mask = tensors.rand_mask(mshape, 130 + k)
        got, _ = value_checks.check_values(
            sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, hints=_hints(cfg, mask)
        )
        leak = got["weights"][~mask.expand(shape)]
        if leak.numel() and leak.abs().max() != 0:
            failing.fail(t("masked_positions_nonzero", name=NAME, n=int((leak != 0).sum())))


def test_fully_masked_rows(sub, cfg):
    scores = tensors.randn((4, 5), 140)
    mask = tensors.rand_mask((4, 5), 141)
    mask[1] = False
    mask[3] = False
    got, _ = value_checks.check_runs(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT)
    value_checks.check_dead_rows(
        calls.describe_call(NAME, [scores], {"mask": mask}),
        got["weights"],
        ~mask.any(-1),
        unmasked=ref.masked_softmax(scores),
        masked=ref.masked_softmax(scores, mask),
        cfg=cfg,
    )


def test_stable_for_large_scores(sub, cfg):
    """Scores far above and far below zero, and rows whose allowed scores are all far below zero."""
    scores = tensors.randn((3, 6), 150, scale=1e4)
    mask = tensors.rand_mask((3, 6), 151)
    low = -1e4 - tensors.randn((3, 6), 152).abs() * 50  # every score far below zero
    lower = -1e7 - tensors.randn((3, 6), 153).abs() * 1e5  # below any finite fill value a softmax might use
    peak = torch.tensor([[0.0, 1000.0, 1.0], [5.0, -3.0, 2000.0]], dtype=torch.float64)  # the largest score masked
    peak_mask = torch.tensor([[True, False, True], [True, True, False]])
    cases = [
        ([scores], {}),
        ([scores], {"mask": mask}),
        ([low], {}),
        ([low], {"mask": mask}),
        ([lower], {"mask": mask}),
        ([peak], {"mask": peak_mask}),
    ]
    for args, kwargs in cases:
        value_checks.check_values(
            sub, cfg, NAME, args, kwargs, ref.masked_softmax, OUT, hints=_stable_hints(args[0], kwargs.get("mask"))
        )


def _stable_hints(scores, mask):
    def h(got, expected):
        if mask is not None and not torch.isnan(got).any():
            m = mask.expand(scores.shape)
            leak = got.double()[~m].abs()
            if leak.numel() and leak.max() > 1e-6 and scores[m].max() < -1e5:
                return Msg("cause_finite_fill_below")
        if torch.isnan(got).any() or (mask is not None and got.double().sum(-1).abs().max() < 0.5):
            return Msg("cause_unstable_exp")
        return causes.weights_hint(got, expected, mask)

    return {"weights": h}


def test_gradients(sub, cfg):
    scores = tensors.randn((3, 4, 5), 160)
    mask = tensors.rand_mask((3, 1, 5), 161)
    mask[0] = False
    grads.check_grads(
        sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, seed=162, hints=_hints(cfg, mask, scores)
    )


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    scores = tensors.randn((4, 6), 170, scale=2.0)
    mask = tensors.rand_mask((4, 6), 171)
    dtypes.check_in_dtype(
        sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, dtype, device, hints=_hints(cfg, mask)
    )


@pytest.mark.property
def test_meta_device(sub, cfg):
    scores = tensors.randn((2, 3, 5), 180)
    mask = tensors.rand_mask((2, 1, 5), 181)
    value_checks.check_runs(
        sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, dtype=torch.float32, device="meta"
    )


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    scores = tensors.randn((3, 5), 190)
    mask = tensors.rand_mask((3, 5), 191)
    value_checks.check_runs(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT)
    properties.check_inputs_unchanged(sub, NAME, [scores], {"mask": mask})


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The number of torch operations must not grow with the number of rows."""
    scores = tensors.randn((3, 5), 195)
    value_checks.check_runs(sub, cfg, NAME, [scores], {}, ref.masked_softmax, OUT)

    def make(rows):
        return [tensors.randn((rows, 5), 196 + rows)], {"mask": tensors.rand_mask((rows, 5), 198 + rows)}

    properties.check_vectorised(sub, NAME, make, (2, 5, 8), "rows")

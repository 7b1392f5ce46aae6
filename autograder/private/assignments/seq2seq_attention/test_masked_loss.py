"""Hidden tests: masked_loss(logits (B, T, V), targets (B, T), mask (B, T)) -> scalar:
the cross-entropy averaged over the positions where mask is True; 0 when there is none."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import calls, compare, dtypes, failing, grads, properties, tensors, value_checks

QUESTION = "masked_loss"
NAME = "masked_loss"
OUT = ("loss",)
SIZES = [(3, 5, 7), (4, 4, 9), (1, 6, 5), (6, 3, 11)]  # (B, T, V)


def case(B, T, V, seed, lengths=None, scale=2.0):
    lengths = (
        torch.as_tensor(lengths) if lengths is not None else torch.randint(1, T + 1, (B,), generator=tensors.gen(seed))
    )
    mask = tensors.lengths_mask(lengths, T)
    targets = torch.where(mask, torch.randint(1, V, (B, T), generator=tensors.gen(seed + 1)), 0)
    logits = tensors.randn((B, T, V), seed + 2, scale=scale)
    return [logits, targets, mask]


def _alternatives(args):
    logits, targets, mask = (a.double() if a.is_floating_point() else a for a in args)
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none"
    ).reshape(targets.shape)  # (B, T)
    m = mask.double()
    per_seq = (ce * m).sum(-1) / m.sum(-1).clamp(min=1)
    return [
        (Msg("cause_lab_loss_mean_all"), ce.mean()),
        (Msg("cause_lab_loss_sum"), (ce * m).sum()),
        (Msg("cause_lab_loss_per_batch"), (ce * m).sum() / targets.shape[0]),
        (Msg("cause_lab_loss_mean_of_means"), per_seq.mean()),
        (Msg("cause_lab_loss_divided_by_all"), (ce * m).sum() / ce.numel()),
        (Msg("cause_lab_loss_no_log_softmax"), -(logits.gather(-1, targets[..., None])[..., 0] * m).sum() / m.sum()),
        (Msg("cause_lab_loss_sign"), -(ce * m).sum() / m.sum().clamp(min=1)),
    ]


def hints(args, cfg):
    def h(got, expected):
        for cause, want in _alternatives(args):
            if compare.matches(got, want, cfg):
                return cause
        if torch.isnan(got.double()).any() and not bool(args[2].any()):
            return Msg("cause_lab_loss_empty_nan")
        return None

    return {"loss": h}


def test_shapes_and_values(sub, cfg):
    """Several sizes, masks of different lengths, a fully real batch."""
    for k, size in enumerate(SIZES):
        args = case(*size, seed=100 + 10 * k)
        value_checks.check_values(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, hints=hints(args, cfg))
    args = case(3, 4, 6, seed=150, lengths=[4, 4, 4])
    value_checks.check_values(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, hints=hints(args, cfg))


def test_padding_changes_nothing(sub, cfg):
    """Other logits and other (valid) targets at padded positions leave the loss unchanged."""
    args = case(*SIZES[0], seed=200, lengths=[5, 2, 3])
    got, _ = value_checks.check_runs(sub, cfg, NAME, args, {}, ref.masked_loss, OUT)
    logits, targets, mask = (a.clone() for a in args)
    logits[~mask] = tensors.randn(logits[~mask].shape, 201, scale=50.0)
    targets[~mask] = torch.randint(1, logits.shape[-1], (int((~mask).sum()),), generator=tensors.gen(202))
    again = calls.call(sub, NAME, [logits, targets, mask]).value
    value_checks.assert_close(
        calls.tensor(again, calls.describe_call(NAME, args)),
        got["loss"],
        t("lab_loss_after_padding_change", what=calls.describe_call(NAME, args)),
        cfg,
        hint=lambda g, e: Msg("cause_lab_loss_padding_counts"),
    )


def test_no_real_position(sub, cfg):
    """A batch with no real position: loss 0, never NaN, and finite gradients."""
    logits, targets, _ = case(*SIZES[0], seed=300)
    args = [logits, targets, torch.zeros(targets.shape, dtype=torch.bool)]
    value_checks.check_runs(sub, cfg, NAME, case(*SIZES[0], seed=300), {}, ref.masked_loss, OUT)
    reply = calls.call(sub, NAME, args)
    what = calls.describe_call(NAME, args)
    got = calls.tensor(reply.value, what)
    if not torch.isfinite(got.double()).all() or float(got.double().reshape(-1)[0]) != 0.0:
        failing.fail(
            failing.caused(
                t("lab_loss_empty", what=what, got=number(float(got.double().reshape(-1)[0]), ".3g")),
                hints(args, cfg)["loss"](got, None),
            )
        )
    grads.check_finite_grads(sub, NAME, args, {}, OUT, 310)


def test_gradients(sub, cfg):
    args = case(*SIZES[3], seed=400)
    grads.check_grads(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, 410, grad_args=[0], hints=hints(args, cfg))


def test_float32(sub, cfg):
    args = case(*SIZES[1], seed=500)
    dtypes.check_in_dtype(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, torch.float32, "cpu", hints=hints(args, cfg))


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args = case(*SIZES[0], seed=600)
    value_checks.check_runs(sub, cfg, NAME, args, {}, ref.masked_loss, OUT)
    properties.check_inputs_unchanged(sub, NAME, args, {})

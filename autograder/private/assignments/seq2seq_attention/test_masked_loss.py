"""Hidden tests: masked_loss(logits (B, T, V), targets (B, T), mask (B, T)) -> scalar:
the cross-entropy averaged over the positions where mask is True; 0 when there is none."""

import pytest
import torch

from autograder.messages import number, t
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import checks as c

QUESTION = "masked_loss"
NAME = "masked_loss"
OUT = ("loss",)
SIZES = [(3, 5, 7), (4, 4, 9), (1, 6, 5), (6, 3, 11)]  # (B, T, V)


def case(B, T, V, seed, lengths=None, scale=2.0):
    lengths = torch.as_tensor(lengths) if lengths is not None else torch.randint(1, T + 1, (B,), generator=c.gen(seed))
    mask = c.lengths_mask(lengths, T)
    targets = torch.where(mask, torch.randint(1, V, (B, T), generator=c.gen(seed + 1)), 0)
    logits = c.randn((B, T, V), seed + 2, scale=scale)
    return [logits, targets, mask]


def _alternatives(args):
    logits, targets, mask = (a.double() if a.is_floating_point() else a for a in args)
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none"
    ).reshape(targets.shape)  # (B, T)
    m = mask.double()
    per_seq = (ce * m).sum(-1) / m.sum(-1).clamp(min=1)
    return [
        (c.Msg("cause_lab_loss_mean_all"), ce.mean()),
        (c.Msg("cause_lab_loss_sum"), (ce * m).sum()),
        (c.Msg("cause_lab_loss_per_batch"), (ce * m).sum() / targets.shape[0]),
        (c.Msg("cause_lab_loss_mean_of_means"), per_seq.mean()),
        (c.Msg("cause_lab_loss_divided_by_all"), (ce * m).sum() / ce.numel()),
        (c.Msg("cause_lab_loss_no_log_softmax"), -(logits.gather(-1, targets[..., None])[..., 0] * m).sum() / m.sum()),
        (c.Msg("cause_lab_loss_sign"), -(ce * m).sum() / m.sum().clamp(min=1)),
    ]


def hints(args):
    def h(got, expected):
        for cause, want in _alternatives(args):
            if c.matches(got, want):
                return cause
        if torch.isnan(got.double()).any() and not bool(args[2].any()):
            return c.Msg("cause_lab_loss_empty_nan")
        return None

    return {"loss": h}


def test_shapes_and_values(sub, cfg):
    """Several sizes, masks of different lengths, a fully real batch."""
    for k, size in enumerate(SIZES):
        args = case(*size, seed=100 + 10 * k)
        c.check_values(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, hints=hints(args))
    args = case(3, 4, 6, seed=150, lengths=[4, 4, 4])
    c.check_values(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, hints=hints(args))


def test_padding_changes_nothing(sub, cfg):
    """Other logits and other (valid) targets at padded positions leave the loss unchanged."""
    args = case(*SIZES[0], seed=200, lengths=[5, 2, 3])
    got, _ = c.check_runs(sub, cfg, NAME, args, {}, ref.masked_loss, OUT)
    logits, targets, mask = (a.clone() for a in args)
    logits[~mask] = c.randn(logits[~mask].shape, 201, scale=50.0)
    targets[~mask] = torch.randint(1, logits.shape[-1], (int((~mask).sum()),), generator=c.gen(202))
    again = c.call(sub, NAME, [logits, targets, mask]).value
    c.assert_close(
        c.tensor(again, c.describe_call(NAME, args)),
        got["loss"],
        t("lab_loss_after_padding_change", what=c.describe_call(NAME, args)),
        cfg,
        hint=lambda g, e: c.Msg("cause_lab_loss_padding_counts"),
    )


def test_no_real_position(sub, cfg):
    """A batch with no real position: loss 0, never NaN, and finite gradients."""
    logits, targets, _ = case(*SIZES[0], seed=300)
    args = [logits, targets, torch.zeros(targets.shape, dtype=torch.bool)]
    c.check_runs(sub, cfg, NAME, case(*SIZES[0], seed=300), {}, ref.masked_loss, OUT)
    reply = c.call(sub, NAME, args)
    what = c.describe_call(NAME, args)
    got = c.tensor(reply.value, what)
    if not torch.isfinite(got.double()).all() or float(got.double().reshape(-1)[0]) != 0.0:
        c.fail(
            c.caused(
                t("lab_loss_empty", what=what, got=number(float(got.double().reshape(-1)[0]), ".3g")),
                hints(args)["loss"](got, None),
            )
        )
    c.check_finite_grads(sub, NAME, args, {}, OUT, 310)


def test_gradients(sub, cfg):
    args = case(*SIZES[3], seed=400)
    c.check_grads(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, 410, grad_args=[0], hints=hints(args))


def test_float32(sub, cfg):
    args = case(*SIZES[1], seed=500)
    c.check_in_dtype(sub, cfg, NAME, args, {}, ref.masked_loss, OUT, torch.float32, "cpu", hints=hints(args))


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args = case(*SIZES[0], seed=600)
    c.check_runs(sub, cfg, NAME, args, {}, ref.masked_loss, OUT)
    c.check_inputs_unchanged(sub, NAME, args, {})

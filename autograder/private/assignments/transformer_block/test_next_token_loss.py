"""Hidden tests: next_token_loss(logits (B, T, V), tokens (B, T), mask=None) -> scalar:
the mean cross-entropy of the predictions at 0 .. T - 2 against tokens 1 .. T - 1,
over the targets where mask is True (every one when None); 0 when there is none."""

import pytest
import torch
from torch.nn import functional as F

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.assignments.transformer_block import common
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import calls, dtypes, grads, properties, tensors, value_checks

QUESTION = "next_token_loss"
NAME = "next_token_loss"
OUT = ("loss",)
SIZES = [(3, 6, 7), (4, 4, 9), (1, 5, 5), (6, 3, 11)]  # (B, T, V)


def case(B, T, V, seed, padded=True, scale=2.0):
    """[logits, tokens] and {"mask": pad mask} (padding after the tokens and, in the last row, before them)."""
    logits = tensors.randn((B, T, V), seed, scale=scale)
    tokens = torch.randint(V, (B, T), generator=tensors.gen(seed + 1))
    kwargs = {"mask": common.pad_mask_of(B, T, seed + 2)} if padded else {}
    return [logits, tokens], kwargs


def _alternatives(args, kwargs):
    logits, tokens = args[0].double(), args[1]
    B, T, _ = logits.shape
    mask = kwargs.get("mask")
    every = torch.ones(B, T, dtype=torch.bool)
    m = every if mask is None else mask
    loss = ref.masked_loss
    ce = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), reduction="none")
    alts = [
        (Msg("cause_tb_loss_no_shift"), loss(logits, tokens, m)),
        (Msg("cause_tb_loss_shift_reversed"), loss(logits[:, 1:], tokens[:, :-1], m[:, :-1])),
        (Msg("cause_tb_loss_shift_reversed"), loss(logits[:, 1:], tokens[:, :-1], m[:, 1:])),
        (Msg("cause_tb_loss_per_batch"), (ce * m[:, 1:].reshape(-1)).sum() / B),
    ]
    if mask is not None:
        alts += [
            (Msg("cause_tb_loss_over_padding"), loss(logits[:, :-1], tokens[:, 1:], every[:, 1:])),
            (Msg("cause_tb_loss_mask_not_shifted"), loss(logits[:, :-1], tokens[:, 1:], m[:, :-1])),
            (Msg("cause_tb_loss_mask_both"), loss(logits[:, :-1], tokens[:, 1:], m[:, :-1] & m[:, 1:])),
        ]
    return alts


def hints(args, kwargs, cfg):
    def h(got, expected):
        found = common.first_match(got, _alternatives(args, kwargs), cfg)
        if found is None and torch.isnan(got.double()).any():
            return Msg("cause_lab_loss_empty_nan")
        return found

    return {"loss": h}


def test_shapes_and_values(sub, cfg):
    """Several sizes, with a padding mask (after the tokens and before them) and without one."""
    for k, size in enumerate(SIZES):
        for padded in (True, False):
            args, kwargs = case(*size, seed=100 + 10 * k + padded, padded=padded)
            value_checks.check_values(
                sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT, hints=hints(args, kwargs, cfg)
            )


def test_padding_changes_nothing(sub, cfg):
    """Other logits at positions whose next token is padding, and other tokens there, change nothing."""
    args, kwargs = case(*SIZES[0], seed=200)
    got, _ = value_checks.check_runs(sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT)
    logits, tokens = (a.clone() for a in args)
    unscored = ~kwargs["mask"][:, 1:]  # (B, T - 1): predictions of a padded token
    logits[:, :-1][unscored] += tensors.randn(logits[:, :-1][unscored].shape, 201, scale=5.0)
    tokens[~kwargs["mask"]] = (tokens[~kwargs["mask"]] + 1) % SIZES[0][2]
    again = calls.outputs(
        calls.call(sub, NAME, [logits, tokens], kwargs).value, calls.describe_call(NAME, args, kwargs), OUT
    )
    value_checks.assert_close(
        again["loss"],
        got["loss"],
        t("tb_loss_after_padded_change", what=calls.describe_call(NAME, args, kwargs)),
        cfg,
        hint=lambda g, e: hints(args, kwargs, cfg)["loss"](got["loss"], None) or Msg("cause_tb_loss_over_padding"),
    )


def test_no_target(sub, cfg):
    """No token counts as a target (one real token a row, or none): 0, never NaN."""
    B, T, V = SIZES[0]
    logits, tokens = case(B, T, V, seed=300, padded=False)[0]
    for mask in (torch.arange(T).expand(B, T) < 1, torch.zeros(B, T, dtype=torch.bool)):
        kwargs = {"mask": mask}
        value_checks.check_values(
            sub,
            cfg,
            NAME,
            [logits, tokens],
            kwargs,
            ref.next_token_loss,
            OUT,
            hints=hints([logits, tokens], kwargs, cfg),
        )


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. the logits."""
    for k, padded in enumerate((True, False)):
        args, kwargs = case(*SIZES[0], seed=400 + 10 * k, padded=padded)
        grads.check_grads(
            sub,
            cfg,
            NAME,
            args,
            kwargs,
            ref.next_token_loss,
            OUT,
            405 + 10 * k,
            grad_args=[0],
            hints=hints(args, kwargs, cfg),
        )


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    args, kwargs = case(*SIZES[0], seed=500)
    dtypes.check_in_dtype(
        sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT, dtype, device, hints=hints(args, kwargs, cfg)
    )


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows a mask or tensors built on the CPU."""
    for padded in (True, False):
        args, kwargs = case(*SIZES[0], seed=600 + padded, padded=padded)
        value_checks.check_runs(
            sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT, dtype=torch.float32, device="meta"
        )


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args, kwargs = case(*SIZES[0], seed=700)
    value_checks.check_runs(sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT)
    properties.check_inputs_unchanged(sub, NAME, args, kwargs)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the batch or the positions."""
    args, kwargs = case(2, 4, 7, seed=800)
    value_checks.check_runs(sub, cfg, NAME, args, kwargs, ref.next_token_loss, OUT)
    properties.check_vectorised(sub, NAME, lambda b: case(b, 4, 7, seed=810), (2, 4, 6), "batch")
    properties.check_vectorised(sub, NAME, lambda n: case(2, n, 7, seed=820), (3, 6, 9), "sequence_length")

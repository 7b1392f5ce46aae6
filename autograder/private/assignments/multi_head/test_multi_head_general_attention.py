"""Hidden tests: multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None)
-> (context (B, d_h), weights (B, n_heads, T)): Luong general attention, one per group of d_h.

Head k scores the decoder state against the k-th group of d_head = d_h / n_heads
features of the encoder states with the k-th block of d_head columns of W, takes
its own masked softmax and its own context; the contexts are concatenated in
head order. With one head it is general_attention. The yardsticks: the
reference (solutions/), and general_attention itself for the one-head case.
"""

import math

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.solutions import multi_head as ref
from autograder.private.solutions.classic_attention import general_attention, masked_softmax
from autograder.private.suites import calls, causes, compare, dtypes, failing, grads, properties, tensors, value_checks

QUESTION = "multi_head_general_attention"
NAME = "multi_head_general_attention"
OUT = ("context", "weights")
# (B, T, d_s, d_h, n_heads): all distinct; B == n_heads (a (B, T) mask used without a head axis
# broadcasts silently there); d_head == 1; one head. d_s is never a multiple of n_heads > 1 in
# the first sizes: nothing of the decoder state is split.
SIZES = [(3, 5, 4, 6, 3), (2, 7, 5, 12, 3), (4, 6, 3, 8, 4), (2, 4, 5, 6, 6), (3, 4, 5, 10, 1)]


# -- inputs -------------------------------------------------------------------------
def inputs(B, T, d_s, d_h, n_heads, seed, mask=True, lengths=None):
    """[decoder_state (B, d_s), encoder_states (B, T, d_h), W (d_s, d_h), n_heads], {mask (B, T)}."""
    s = tensors.randn((B, d_s), seed)
    H = tensors.randn((B, T, d_h), seed + 1)
    W = tensors.randn((d_s, d_h), seed + 2, scale=0.5)
    kwargs = {}
    if mask:
        if lengths is None:
            lengths = [T - (b % T) for b in range(B)]  # first row unpadded, the rest padded
        kwargs["mask"] = tensors.lengths_mask(lengths, T)
    return [s, H, W, n_heads], kwargs


def block(k, d_head):
    """The features (and W's columns) of head k."""
    return slice(k * d_head, (k + 1) * d_head)


# -- likely causes ------------------------------------------------------------------
def _manual(args, mask, split="ok", w_split="ok", scale=1.0, mask_as="ok", one_attention=False, merge="ok"):
    """The function written out here, with one mistake at a time: (context, weights)."""
    s, H, W, n = [a.detach().double().cpu() if isinstance(a, torch.Tensor) else a for a in args]
    B, T, d_h = H.shape
    d_s, d = s.shape[-1], d_h // n
    Hh = {"view": lambda: H.reshape(B, n, T, d), "interleaved": lambda: H.reshape(B, T, d, n).permute(0, 3, 1, 2)}.get(
        split, lambda: H.reshape(B, T, n, d).transpose(1, 2)
    )()  # (B, n, T, d)
    Wh = {
        "view": lambda: W.reshape(n, d_s, d),
        "interleaved": lambda: W.reshape(d_s, d, n).permute(2, 0, 1),
        "first": lambda: W[:, :d].expand(n, d_s, d),
    }.get(w_split, lambda: W.reshape(d_s, n, d).transpose(0, 1))()  # (n, d_s, d)
    if one_attention:  # general attention over all d_h features, copied to every head
        scores = (H @ W.T @ s.unsqueeze(-1)).squeeze(-1)[:, None].expand(B, n, T)
    else:
        scores = ((Hh @ Wh.transpose(-2, -1)) @ s[:, None, :, None]).squeeze(-1)  # (B, n, T)
    m = None
    if mask is not None:
        m = {
            "ok": lambda: mask[:, None],
            "inverted": lambda: ~mask[:, None],
            "ignored": lambda: None,
            "no_head_axis": lambda: mask[None].expand(B, n, T),
        }[mask_as]()
    w = masked_softmax(scores / scale, m, dim=-1)  # (B, n, T)
    heads = (w.unsqueeze(-2) @ Hh).squeeze(-2)  # (B, n, d)
    context = heads.transpose(1, 2).reshape(B, d_h) if merge == "interleaved" else heads.reshape(B, d_h)
    return context, w


def _alternatives(args, mask):
    B, _, d_h = args[1].shape
    n = args[3]
    d = d_h // n
    alts = []
    if d > 1:
        alts.append((Msg("cause_mhl_scaled_d_head"), _manual(args, mask, scale=math.sqrt(d))))
    if n > 1:
        alts += [
            (Msg("cause_mhl_scaled_d_h"), _manual(args, mask, scale=math.sqrt(d_h))),
            (Msg("cause_mhl_split_view"), _manual(args, mask, split="view")),
            (Msg("cause_mhl_w_view"), _manual(args, mask, w_split="view")),
            (Msg("cause_mhl_first_block"), _manual(args, mask, w_split="first")),
            (Msg("cause_mhl_one_attention"), _manual(args, mask, one_attention=True)),
        ]
    if n > 1 and d > 1:
        alts += [
            (Msg("cause_mhl_interleaved"), _manual(args, mask, split="interleaved", w_split="interleaved")),
            (Msg("cause_mhl_context_interleaved"), _manual(args, mask, merge="interleaved")),
        ]
    if mask is not None:
        if B == n:
            alts.append((Msg("cause_mhl_mask_no_head_axis"), _manual(args, mask, mask_as="no_head_axis")))
        alts += [
            (Msg("cause_polarity_may_attend"), _manual(args, mask, mask_as="inverted")),
            (causes.mask_ignored(), _manual(args, mask, mask_as="ignored")),
        ]
    return alts


def hints(args, kwargs, cfg):
    """Likely causes for wrong weights and a wrong context, from what they hold."""
    mask = kwargs.get("mask")
    cache = []

    def alts():
        if not cache:
            cache.extend(_alternatives(args, mask))
        return cache

    def weights(g, e):
        for cause, (_, w) in alts():
            if compare.matches(g, w, cfg):
                return cause
        return causes.weights_hint(g, e, None if mask is None else mask[:, None])

    def context(g, e):
        for cause, (ctx, _) in alts():
            if compare.matches(g, ctx, cfg):
                return cause
        if torch.isnan(g).any():
            return Msg("cause_context_nan")
        return None

    return {"weights": weights, "context": context}


def shape_hints(args):
    """Likely causes for outputs of the wrong shape."""
    B, T, d_h = args[1].shape
    n = args[3]
    d = d_h // n if n >= 1 and d_h % n == 0 else None

    def weights(got, want):
        if tuple(got) == (B, T):
            return Msg("cause_mhl_weights_merged") if n > 1 else Msg("cause_mhl_weights_no_head_axis")
        return None

    def context(got, want):
        if tuple(got) == (B, n, d):
            return Msg("cause_mhl_context_not_merged")
        if n > 1 and tuple(got) == (B, d):
            return Msg("cause_mhl_context_one_head")
        return None

    return {"weights": weights, "context": context}


def mask_cause(sub, args, kwargs):
    """For an error raised with a mask: the same call without one works, so the (B, T)
    mask was used without a head axis (computed only when needed)."""

    def cause():
        if kwargs.get("mask") is not None and sub.probe(NAME, args, {}).ok:
            return Msg("cause_mhl_mask_no_head_axis")
        return None

    return cause


def runs(sub, cfg, args, kwargs, **opts):
    """value_checks.check_runs, with the likely cause of an error raised only with a mask."""
    with failing.explain_errors(mask_cause(sub, args, kwargs)):
        return value_checks.check_runs(
            sub, cfg, NAME, args, kwargs, ref.multi_head_general_attention, OUT, shape_hints=shape_hints(args), **opts
        )


def describe(args, kwargs):
    return calls.describe_call(NAME, args, kwargs)


# -- the checks ---------------------------------------------------------------------
def test_shapes_and_values(sub, cfg):
    """Every size, with and without a mask: values against the reference, every head's weights summing to 1."""
    for k, size in enumerate(SIZES):
        for masked in (False, True):
            args, kwargs = inputs(*size, seed=200 + 10 * k, mask=masked)
            with failing.explain_errors(mask_cause(sub, args, kwargs)):
                got, _ = value_checks.check_values(
                    sub,
                    cfg,
                    NAME,
                    args,
                    kwargs,
                    ref.multi_head_general_attention,
                    OUT,
                    hints=hints(args, kwargs, cfg),
                    shape_hints=shape_hints(args),
                )
            sums = got["weights"].double().sum(-1)
            value_checks.assert_close(
                sums,
                torch.ones_like(sums),
                t("weights_summed_keys", what=describe(args, kwargs)),
                cfg,
                hint=lambda g, e: Msg("cause_rows_not_one_t"),
            )


def test_single_head_is_general_attention(sub, cfg):
    """n_heads == 1 is general_attention: the same context, and its weights in the one head."""
    for k, size in enumerate(((3, 5, 4, 6, 1), (2, 6, 7, 3, 1))):
        for masked in (False, True):
            args, kwargs = inputs(*size, seed=250 + 10 * k, mask=masked)
            got, _ = runs(sub, cfg, args, kwargs)
            with torch.no_grad():
                context, weights = general_attention(*args[:3], **kwargs)
            h = hints(args, kwargs, cfg)
            what = describe(args, kwargs)
            value_checks.assert_close(
                got["weights"][:, 0],
                weights,
                t("mhl_against_general", what=what, name="weights[:, 0]"),
                cfg,
                hint=lambda g, e: h["weights"](g.unsqueeze(1), e.unsqueeze(1)),
            )
            value_checks.assert_close(
                got["context"], context, t("mhl_against_general", what=what, name="context"), cfg, hint=h["context"]
            )


def test_heads_independent(sub, cfg):
    """Changing head j's features (its group of encoder_states and its block of W's
    columns) changes head j only: the other heads' weights and context blocks stay."""
    B, T, d_s, d_h, n = 2, 5, 4, 9, 3
    d = d_h // n
    args, kwargs = inputs(B, T, d_s, d_h, n, seed=280)
    got, _ = runs(sub, cfg, args, kwargs)
    for j in range(n):
        s, H, W, _ = (a.clone() if isinstance(a, torch.Tensor) else a for a in args)
        H[..., block(j, d)] += tensors.randn((B, T, d), 281 + j, scale=2.0)
        W[:, block(j, d)] += tensors.randn((d_s, d), 285 + j, scale=1.0)
        changed = [s, H, W, n]
        again = calls.outputs(calls.call(sub, NAME, changed, kwargs).value, describe(changed, kwargs), OUT)
        for k in range(n):
            if k == j:
                continue
            value_checks.assert_close(
                again["weights"][:, k],
                got["weights"][:, k],
                t("mhl_head_changed", what=describe(args, kwargs), j=j, k=k, a=j * d, b=(j + 1) * d),
                cfg,
                hint=lambda g, e: Msg("cause_mhl_heads_mixed"),
            )
            value_checks.assert_close(
                again["context"][:, block(k, d)],
                got["context"][:, block(k, d)],
                t("mhl_context_changed", what=describe(args, kwargs), j=j, k=k, a=k * d, b=(k + 1) * d),
                cfg,
                hint=lambda g, e: Msg("cause_mhl_heads_mixed"),
            )


def test_padding(sub, cfg):
    """Padded keys get weight exactly 0 in every head, and changing their encoder states changes nothing."""
    B, T, d_s, d_h, n = SIZES[1]
    lengths = [T, 2]
    args, kwargs = inputs(B, T, d_s, d_h, n, seed=300, lengths=lengths)
    got, _ = runs(sub, cfg, args, kwargs)
    mask = kwargs["mask"][:, None].expand(got["weights"].shape)  # (B, n_heads, T)
    leak = got["weights"][~mask]
    what = describe(args, kwargs)
    if leak.abs().max() != 0:
        with torch.no_grad():
            unmasked = ref.multi_head_general_attention(*args)[1]
        cause = causes.padding_leak_cause(got["weights"], mask, unmasked, cfg)
        failing.fail(
            failing.caused(t("padded_keys_nonzero_heads", what=what, max=number(float(leak.abs().max()), ".3g")), cause)
        )
    perturbed = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    pad = ~kwargs["mask"]
    perturbed[1][pad] += tensors.randn(perturbed[1][pad].shape, 301, scale=5.0)
    again = calls.outputs(calls.call(sub, NAME, perturbed, kwargs).value, what, OUT)
    value_checks.assert_close(
        again["context"],
        got["context"],
        t("context_after_padded", name=what),
        cfg,
    )


def test_fully_masked_rows(sub, cfg):
    """A batch row with no real token: all-zero weights in every head and a zero context,
    never NaN, and finite gradients."""
    B, T, d_s, d_h, n = SIZES[0]
    args, kwargs = inputs(B, T, d_s, d_h, n, seed=400, lengths=[T, 0, 2])
    got, _ = runs(sub, cfg, args, kwargs)
    dead = ~kwargs["mask"].any(-1)  # (B,): the batch row with no real token
    with torch.no_grad():
        unmasked, masked = (
            ref.multi_head_general_attention(*args)[1],
            ref.multi_head_general_attention(*args, **kwargs)[1],
        )
    value_checks.check_dead_rows(
        t("in_every_head", what=describe(args, kwargs)),
        got["weights"],
        dead[:, None],
        unmasked,
        others=[(got["context"], dead)],
        masked=masked,
        cfg=cfg,
    )
    grads.check_finite_grads(sub, NAME, args, kwargs, OUT, seed=410)


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. decoder_state, encoder_states and W."""
    for k, size in enumerate((SIZES[1], SIZES[2])):
        args, kwargs = inputs(*size, seed=500 + 10 * k)
        with failing.explain_errors(mask_cause(sub, args, kwargs)):
            grads.check_grads(
                sub,
                cfg,
                NAME,
                args,
                kwargs,
                ref.multi_head_general_attention,
                OUT,
                seed=505 + 10 * k,
                hints=hints(args, kwargs, cfg),
            )


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    args, kwargs = inputs(*SIZES[1], seed=600)
    with failing.explain_errors(mask_cause(sub, args, kwargs)):
        dtypes.check_in_dtype(
            sub,
            cfg,
            NAME,
            args,
            kwargs,
            ref.multi_head_general_attention,
            OUT,
            dtype,
            device,
            hints=hints(args, kwargs, cfg),
            shape_hints=shape_hints(args),
        )


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows tensors built on the CPU, with a mask and without one."""
    for size, masked in ((SIZES[0], True), (SIZES[1], False)):
        args, kwargs = inputs(*size, seed=700, mask=masked)
        runs(sub, cfg, args, kwargs, dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args, kwargs = inputs(*SIZES[2], seed=800)
    runs(sub, cfg, args, kwargs)
    properties.check_inputs_unchanged(sub, NAME, args, kwargs)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The number of torch operations must not grow with the batch, the length or the heads
    (without a mask: a mask the function mishandles is the values checks' finding)."""
    args, kwargs = inputs(*SIZES[1], seed=900, mask=False)
    runs(sub, cfg, args, kwargs)
    d = 3
    for grow, make, sizes in (
        ("batch", lambda b: inputs(b, 5, 4, 4 * d, 4, seed=910, mask=False), (2, 4, 6)),
        ("sequence_length", lambda n: inputs(2, n, 4, 4 * d, 4, seed=910, mask=False), (3, 6, 9)),
        ("heads", lambda h: inputs(2, 5, 4, h * d, h, seed=910, mask=False), (2, 4, 6)),
    ):
        properties.check_vectorised(sub, NAME, make, sizes, grow)


def test_value_error_when_not_divisible(sub, cfg):
    """(Without a mask, here and below: these checks are about n_heads.)"""
    runs(sub, cfg, *inputs(*SIZES[1], seed=950, mask=False))
    for k, (d_h, h) in enumerate(((6, 4), (10, 3), (9, 2))):
        args, kwargs = inputs(2, 4, 5, d_h, h, seed=951 + 5 * k, mask=False)
        properties.expect_value_error(sub, NAME, args, kwargs, why=t("why_mhl_not_divisible", d_h=d_h, h=h))


def test_value_error_when_no_heads(sub, cfg):
    runs(sub, cfg, *inputs(*SIZES[1], seed=970, mask=False))
    for k, h in enumerate((0, -2)):
        args, kwargs = inputs(2, 4, 5, 6, h, seed=971 + 5 * k, mask=False)
        properties.expect_value_error(sub, NAME, args, kwargs, why=t("why_mhl_no_heads", h=h))


@pytest.mark.property
def test_from_scratch(sub, cfg, cells, provided):
    args, kwargs = inputs(*SIZES[1], seed=990, mask=False)
    runs(sub, cfg, args, kwargs)
    properties.check_from_scratch(sub, cells, provided, NAME, args, kwargs)

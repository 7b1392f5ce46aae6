"""The shapes drill's shared parts: inputs for every decoder step at once, and the
broken variants the student's regression test is run against.

Shapes: decoder_states (B, T_dec, d_s), encoder_states (B, T_enc, d_h), W (d_s,
d_h), mask (B, T_enc); outputs context (B, T_dec, d_h), weights (B, T_dec,
T_enc). Sizes come in three kinds: all different (a shape bug crashes or shows
in the outputs' shapes), d_s == d_h (W used untransposed fits) and B == T_dec
(batch and decoder steps swapped fit), so a fix that only makes sizes fit
fails on values where they coincide.

`VARIANTS` are functions with one shape bug each, run only here in the judge:
the regression-test question calls the student's test with a stand-in
(`autograder.judge.proxies`) that the judge answers with one of them. Their
code never reaches the worker. The hidden ones never raise where the reference
runs: each returns tensors of a plausible shape, wrong in values or in a shape
the contract fixes, so only a test that looks at its outputs catches it (a
crash is caught by any call, with or without an assertion). The provided
function raises when d_s != d_h, as its students saw; its catch counts only
where it runs and answers wrongly (d_s == d_h).
"""

import torch

from autograder.faults import Refused, contract
from autograder.judge.failure import Msg
from autograder.private.solutions import classic_attention as ref
from autograder.private.solutions.classic_attention import masked_softmax
from autograder.private.suites import causes, compare, tensors

OUT = ("context", "weights")
# (B, T_dec, T_enc, d_s, d_h): all different; d_s == d_h; B == T_dec; both, and T_dec == T_enc.
SIZES = [(2, 3, 5, 4, 6), (3, 2, 5, 4, 4), (3, 3, 5, 4, 6), (4, 4, 4, 5, 5)]


def inputs(B, T_dec, T_enc, d_s, d_h, seed, mask=True, lengths=None):
    """([decoder_states, encoder_states, W], {"mask": ...}) in float64."""
    s = tensors.randn((B, T_dec, d_s), seed)
    H = tensors.randn((B, T_enc, d_h), seed + 1)
    W = tensors.randn((d_s, d_h), seed + 2, scale=0.5)
    kwargs = {}
    if mask:
        if lengths is None:
            lengths = [T_enc - (b % T_enc) for b in range(B)]  # first row unpadded, the rest padded
        kwargs["mask"] = tensors.lengths_mask(lengths, T_enc)
    return [s, H, W], kwargs


def _keys(mask):
    return None if mask is None else mask.unsqueeze(1)  # (B, 1, T_enc)


def _steps_as_batch(decoder_states, encoder_states, W, mask=None):
    """The weights' batch and decoder-step axes swapped before the product with the encoder
    states: fits only when B == T_dec (a likely mistake in the fix, for its hints)."""
    scores = decoder_states @ (encoder_states @ W.T).transpose(1, 2)  # (B, T_dec, T_enc)
    weights = masked_softmax(scores, _keys(mask), dim=-1)
    return weights.transpose(0, 1) @ encoder_states, weights  # (T_dec, B, T_enc) @ (B, T_enc, d_h)


def _answering(fn):
    """`fn`, which never raises where the reference runs: on inputs its own code cannot take
    (off the contract's shapes, where the reference may still run by broadcasting), the
    reference's outputs shifted by 1, wrong in every value. A variant that raised would be
    caught by any call, assertions or none."""

    def variant(decoder_states, encoder_states, W, mask=None):
        try:
            with contract(decoder_states, encoder_states, W, mask):
                return fn(decoder_states, encoder_states, W, mask)
        except Refused:  # the reference decides what the inputs allow (it is called next); any other error is the kit's
            context, weights = ref.fixed_general_attention(decoder_states, encoder_states, W, mask)
            return context + 1, weights + 1

    variant.__name__ = fn.__name__
    variant.__doc__ = fn.__doc__
    return variant


@_answering
def batch_and_steps_swapped(decoder_states, encoder_states, W, mask=None):
    """The context comes out (T_dec, B, d_h), its batch and decoder-step axes swapped: a wrong
    shape when B != T_dec, wrong values when B == T_dec (both above 1)."""
    scores = decoder_states @ (encoder_states @ W.T).transpose(1, 2)  # (B, T_dec, T_enc)
    weights = masked_softmax(scores, _keys(mask), dim=-1)
    return torch.einsum("btk,bkd->tbd", weights, encoder_states), weights


@_answering
def softmax_over_steps(decoder_states, encoder_states, W, mask=None):
    """The softmax over the decoder steps (dim=1), not the keys: right shapes, rows that do not sum to 1."""
    scores = decoder_states @ (encoder_states @ W.T).transpose(1, 2)
    weights = masked_softmax(scores, _keys(mask), dim=1)
    return weights @ encoder_states, weights


@_answering
def context_from_projected(decoder_states, encoder_states, W, mask=None):
    """The context averages the projected keys (size d_s), not the encoder states (size d_h):
    a wrong shape when d_s != d_h, wrong values when d_s == d_h."""
    projected = encoder_states @ W.T  # (B, T_enc, d_s)
    weights = masked_softmax(decoder_states @ projected.transpose(1, 2), _keys(mask), dim=-1)
    return weights @ projected, weights


@_answering
def scores_transposed(decoder_states, encoder_states, W, mask=None):
    """Scores (B, T_enc, T_dec), keys and queries swapped in the product, normalised over the
    keys: the context is right, the weights come out (B, T_enc, T_dec): a wrong shape when
    T_dec != T_enc, wrong values (transposed) when T_dec == T_enc."""
    projected = encoder_states @ W.T  # (B, T_enc, d_s)
    scores = projected @ decoder_states.transpose(1, 2)  # (B, T_enc, T_dec)
    weights = masked_softmax(scores, None if mask is None else mask.unsqueeze(2), dim=1)
    return weights.transpose(1, 2) @ encoder_states, weights


# The provided function's bug first (the check that the test catches *it*), then the hidden ones.
PROVIDED_VARIANT = "w_untransposed"
VARIANTS = {
    "w_untransposed": ref.broken_general_attention,  # the provided function itself
    "batch_and_steps_swapped": batch_and_steps_swapped,
    "softmax_over_steps": softmax_over_steps,
    "context_from_projected": context_from_projected,
    "scores_transposed": scores_transposed,
}
# per variant: (what it is, for the feedback; why a test that passed on it missed it)
ABOUT = {
    "w_untransposed": ("drill_variant_w_untransposed", "cause_drill_miss_w_untransposed"),
    "batch_and_steps_swapped": ("drill_variant_batch_and_steps_swapped", "cause_drill_miss_batch_and_steps_swapped"),
    "softmax_over_steps": ("drill_variant_softmax_over_steps", "cause_drill_miss_softmax_over_steps"),
    "context_from_projected": ("drill_variant_context_from_projected", "cause_drill_miss_context_from_projected"),
    "scores_transposed": ("drill_variant_scores_transposed", "cause_drill_miss_scores_transposed"),
}
HIDDEN_VARIANTS = [n for n in VARIANTS if n != PROVIDED_VARIANT]


def w_reshaped(decoder_states, encoder_states, W, mask=None):
    """A 'fix' that only makes sizes fit: W.reshape(d_h, d_s) instead of W.T."""
    d_s, d_h = W.shape
    projected = encoder_states @ W.reshape(d_h, d_s)
    weights = masked_softmax(decoder_states @ projected.transpose(1, 2), _keys(mask), dim=-1)
    return weights @ encoder_states, weights


def hints(args, kwargs, cfg):
    """Likely causes for wrong outputs of the fixed function, from what they hold."""
    mask = kwargs.get("mask")
    plain = [a.detach().double().cpu() for a in args]
    known = [("cause_drill_fix_reshaped", w_reshaped)]
    if plain[0].shape[-1] == plain[1].shape[-1]:
        known.insert(0, ("cause_drill_still_broken", ref.broken_general_attention))
    if plain[0].shape[0] == plain[0].shape[1]:
        known.append(("cause_drill_batch_steps", _steps_as_batch))
    known.append(("cause_drill_softmax_steps", softmax_over_steps))
    if mask is not None:  # the mask left out: the reference's outputs without it
        known.append(("cause_mask_ignored", lambda d, e, W, mask: ref.fixed_general_attention(d, e, W)))

    def hint_for(index):
        def hint(got, expected):
            for key, fn in known:
                with torch.no_grad():
                    out = fn(*plain, mask)[index]
                if tuple(out.shape) == tuple(got.shape) and compare.matches(got, out, cfg):
                    return Msg(key)
            return causes.weights_hint(got, expected, _keys(mask)) if index == 1 else None

        return hint

    return {"context": hint_for(0), "weights": hint_for(1)}


def shape_hints(args):
    """A likely cause for outputs of the wrong shape."""
    B, T_dec, d_s = args[0].shape
    _, T_enc, d_h = args[1].shape

    def context(got, want):
        if len(got) == 3 and got[-1] == d_s != d_h:
            return Msg("cause_drill_context_projected")
        return None

    def weights(got, want):
        if len(got) == 3 and tuple(got) == (B, T_enc, T_dec):
            return Msg("cause_drill_weights_transposed")
        return None

    return {"context": context, "weights": weights}

"""Reference solutions for the `classic_attention` assignment.

The only source of these functions: the master notebook's solution cells and
the student notebook's stubs are generated from this file
(`python -m autograder build`), and the hidden suites compare against it.

Shapes (one decoder step, batched):
    decoder_state  (B, d_s)      the query
    encoder_states (B, T, d_h)   keys and values
    mask           (B, T) bool   True where a position may be attended to
Every attention function returns (context (B, d_h), weights (B, T)).

The shapes drill (the last part) works on every decoder step at once:
decoder_states (B, T_dec, d_s), encoder_states (B, T_enc, d_h), mask (B, T_enc);
it returns (context (B, T_dec, d_h), weights (B, T_dec, T_enc)). Students get
`broken_general_attention` (PROVIDED) with one shape bug, type what is wrong
with it into the drill's answer cell (`shapes_drill`, an answer in BY_HAND:
read by the judge, never run), write `fixed_general_attention` and a
regression test `test_attention_shapes(attention)` that fails on the broken
function.
"""
import torch

PROVIDED = ("broken_general_attention",)

# Questions answered in a typed cell, not with a function: the build makes no stub for
# them and the judge reads the cell without running it (autograder.judge.by_hand, the
# form SHAPES_DRILL). `shapes_drill`: the tensor of `broken_general_attention` whose
# shape does not fit the operation it enters, the shape it needs there (in the
# contract's size names), and the kind of fix.
BY_HAND = {
    "shapes_drill": {"wrong_tensor": "W", "right_shape": ["d_h", "d_s"], "fix": "transpose"},
}


def masked_softmax(scores, mask=None, dim=-1):
    """Softmax of `scores` over `dim`, giving weight 0 to positions where `mask` is False.

    Args:
        scores: float tensor of any shape.
        mask: bool tensor broadcastable to `scores`, True where a position is
            allowed; None means every position is allowed.
        dim: the axis to normalise over (the key axis).

    Returns:
        A tensor shaped like `scores`: along `dim`, the allowed entries sum to 1
        and the disallowed ones are exactly 0. A slice whose entries are all
        disallowed is all zeros (never NaN). Numerically stable for large scores.
    """
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # Subtract the row maximum; a fully masked row has max -inf, so use 0 there.
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)  # exp(-inf) = 0 for disallowed entries
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    """Bahdanau (additive) attention: e[b, i] = v_a . tanh(W_a s_b + U_a h_{b,i}).

    Args:
        decoder_state: (B, d_s), the decoder state s (Bahdanau uses s_{t-1}).
        encoder_states: (B, T, d_h), the encoder states h_1 .. h_T.
        W_a: (d_attn, d_s). U_a: (d_attn, d_h). v_a: (d_attn,).
        mask: (B, T) bool, True for real tokens, or None.

    Returns:
        (context, weights): context (B, d_h) = sum_i weights[b, i] h_{b,i};
        weights (B, T).
    """
    query = decoder_state @ W_a.T  # (B, d_attn)
    keys = encoder_states @ U_a.T  # (B, T, d_attn)
    scores = torch.tanh(query.unsqueeze(1) + keys) @ v_a  # (B, T)
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)  # (B, d_h)
    return context, weights


def dot_attention(decoder_state, encoder_states, mask=None):
    """Luong dot attention: e[b, i] = s_b . h_{b,i}.

    Args:
        decoder_state: (B, d_s). encoder_states: (B, T, d_h). mask: (B, T) bool or None.

    Returns:
        (context (B, d_h), weights (B, T)).

    Raises:
        ValueError: when d_s != d_h (the dot product needs equal sizes).
    """
    d_s, d_h = decoder_state.shape[-1], encoder_states.shape[-1]
    if d_s != d_h:
        raise ValueError(f"dot attention needs d_s == d_h, got d_s={d_s}, d_h={d_h}")
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)  # (B, T)
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)  # (B, d_h)
    return context, weights


def general_attention(decoder_state, encoder_states, W, mask=None):
    """Luong general attention: e[b, i] = s_b . (W h_{b,i}).

    Args:
        decoder_state: (B, d_s). encoder_states: (B, T, d_h). W: (d_s, d_h).
        mask: (B, T) bool or None.

    Returns:
        (context (B, d_h), weights (B, T)).
    """
    projected = encoder_states @ W.T  # (B, T, d_s)
    scores = (projected @ decoder_state.unsqueeze(-1)).squeeze(-1)  # (B, T)
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)  # (B, d_h)
    return context, weights


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    """Luong concat attention: e[b, i] = v_a . tanh(W_a [s_b; h_{b,i}]).

    Args:
        decoder_state: (B, d_s). encoder_states: (B, T, d_h).
        W_a: (d_attn, d_s + d_h), the decoder state's columns first. v_a: (d_attn,).
        mask: (B, T) bool or None.

    Returns:
        (context (B, d_h), weights (B, T)).
    """
    B, T, d_h = encoder_states.shape
    s = decoder_state.unsqueeze(1).expand(B, T, decoder_state.shape[-1])  # (B, T, d_s)
    pairs = torch.cat([s, encoder_states], dim=-1)  # (B, T, d_s + d_h)
    scores = torch.tanh(pairs @ W_a.T) @ v_a  # (B, T)
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)  # (B, d_h)
    return context, weights


def broken_general_attention(decoder_states, encoder_states, W, mask=None):
    """Luong general attention for every decoder step at once, with one shape bug.

    Args:
        decoder_states: (B, T_dec, d_s). encoder_states: (B, T_enc, d_h).
        W: (d_s, d_h). mask: (B, T_enc) bool or None.

    Returns:
        (context (B, T_dec, d_h), weights (B, T_dec, T_enc)), when it runs.
    """
    projected = encoder_states @ W  # meant to be (B, T_enc, d_s)
    scores = decoder_states @ projected.transpose(1, 2)  # (B, T_dec, T_enc)
    if mask is not None:
        mask = mask.unsqueeze(1)  # (B, 1, T_enc): the same keys for every decoder step
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T_dec, T_enc)
    context = weights @ encoder_states  # (B, T_dec, d_h)
    return context, weights


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    """Luong general attention for every decoder step at once: e[b, t, i] = s_{b,t} . (W h_{b,i}).

    Args:
        decoder_states: (B, T_dec, d_s). encoder_states: (B, T_enc, d_h).
        W: (d_s, d_h). mask: (B, T_enc) bool or None, the same for every decoder step.

    Returns:
        (context (B, T_dec, d_h), weights (B, T_dec, T_enc)); each row of weights
        with an allowed key sums to 1 over T_enc.
    """
    projected = encoder_states @ W.T  # (B, T_enc, d_s)
    scores = decoder_states @ projected.transpose(1, 2)  # (B, T_dec, T_enc)
    if mask is not None:
        mask = mask.unsqueeze(1)  # (B, 1, T_enc)
    weights = masked_softmax(scores, mask, dim=-1)  # (B, T_dec, T_enc)
    context = weights @ encoder_states  # (B, T_dec, d_h)
    return context, weights


def test_attention_shapes(attention):
    """A regression test for the shape bug: fails on `broken_general_attention`.

    Args:
        attention: a function with the signature of `fixed_general_attention`.

    Raises:
        AssertionError when it breaks the contract: context (B, T_dec, d_h),
        weights (B, T_dec, T_enc) with the values of e[b, t, i] = s_{b,t} . (W h_{b,i})
        (rows summing to 1 over T_enc, padded keys at weight 0), on sizes where
        d_s == d_h (where a wrong axis fits and only the values show it) and on
        sizes that are all different.
    """
    gen = torch.Generator().manual_seed(0)
    for batch_size, T_dec, T_enc, d_s, d_h in ((2, 3, 5, 4, 4), (2, 3, 5, 4, 6)):
        decoder_states = torch.randn(batch_size, T_dec, d_s, generator=gen, dtype=torch.float64)
        encoder_states = torch.randn(batch_size, T_enc, d_h, generator=gen, dtype=torch.float64)
        W = torch.randn(d_s, d_h, generator=gen, dtype=torch.float64)
        mask = torch.ones(batch_size, T_enc, dtype=torch.bool)
        mask[1, 3:] = False  # the second sentence has 3 real tokens
        context, weights = attention(decoder_states, encoder_states, W, mask)
        assert context.shape == (batch_size, T_dec, d_h), f"context {tuple(context.shape)}"
        assert weights.shape == (batch_size, T_dec, T_enc), f"weights {tuple(weights.shape)}"
        # the same numbers written another way: each score s_{b,t} . (W h_{b,i}) by its indices
        scores = torch.einsum("btd,de,bie->bti", decoder_states, W, encoder_states)
        expected = torch.softmax(scores.masked_fill(~mask[:, None, :], float("-inf")), dim=-1)
        assert torch.allclose(weights.sum(dim=-1), torch.ones(batch_size, T_dec, dtype=torch.float64)), \
            "weights do not sum to 1 over T_enc"
        assert (weights[1, :, 3:] == 0).all(), "padded keys get weight"
        assert torch.allclose(weights, expected), "weights differ from softmax(s . (W h))"
        assert torch.allclose(context, expected @ encoder_states), "context differs from the weighted encoder states"

"""
correct: the drill answered with a list for the shape, the fix written with einsum, and a regression test in float32 on sizes with d_s == d_h, padding, the values from the formula and explicit raises of AssertionError instead of assert
functions: [fixed_general_attention, test_attention_shapes]
questions: []
"""
import torch

SHAPES_DRILL_CELL = """\
wrong_tensor = 'W'  # it meets h's d_h features from the wrong side
right_shape = ['d_h', 'd_s']
fix = 'transpose'
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    scores = torch.einsum("btd,de,bie->bti", decoder_states, W, encoder_states)  # s . (W h)
    weights = masked_softmax(scores, None if mask is None else mask[:, None, :], dim=-1)
    return torch.einsum("bti,bie->bte", weights, encoder_states), weights


def test_attention_shapes(attention):
    B, T_dec, T_enc, d = 3, 2, 7, 5  # d_s == d_h == d: a wrong axis fits, only the values tell
    mask = torch.arange(T_enc).expand(B, T_enc) < torch.tensor([[7], [4], [1]])
    s, h, W = torch.randn(B, T_dec, d), torch.randn(B, T_enc, d), torch.randn(d, d)
    context, weights = attention(s, h, W, mask=mask)
    if tuple(context.shape) != (B, T_dec, d):
        raise AssertionError(f"context {tuple(context.shape)}")
    if tuple(weights.shape) != (B, T_dec, T_enc):
        raise AssertionError(f"weights {tuple(weights.shape)}")
    if not torch.allclose(weights.sum(-1), torch.ones(B, T_dec), atol=1e-5):
        raise AssertionError("rows do not sum to 1")
    scores = (s @ W) @ h.transpose(1, 2)  # s . (W h), with W on the query side
    want = torch.softmax(scores.masked_fill(~mask[:, None, :], float("-inf")), dim=-1)
    if not torch.allclose(weights, want, atol=1e-5) or not torch.allclose(context, want @ h, atol=1e-5):
        raise AssertionError("values differ from the formula")

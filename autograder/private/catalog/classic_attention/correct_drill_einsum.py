"""
correct: the drill answered with a list for the shape, the fix written with einsum, and a regression test in float32 with two sentences, padding and explicit raises instead of assert
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
    B, T_dec, T_enc, d_s, d_h = 3, 2, 7, 5, 8
    mask = torch.arange(T_enc).expand(B, T_enc) < torch.tensor([[7], [4], [1]])
    context, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h), mask=mask)
    if tuple(context.shape) != (B, T_dec, d_h):
        raise ValueError(f"context {tuple(context.shape)}")
    if tuple(weights.shape) != (B, T_dec, T_enc):
        raise ValueError(f"weights {tuple(weights.shape)}")
    if not torch.allclose(weights.sum(-1), torch.ones(B, T_dec), atol=1e-5):
        raise ValueError("rows do not sum to 1")

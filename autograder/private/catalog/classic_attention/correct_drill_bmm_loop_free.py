"""
correct: the fix with F.linear and bmm, and a regression test that checks one size at a time over several size sets
functions: [fixed_general_attention, test_attention_shapes]
questions: []
"""
import torch
import torch.nn.functional as F


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    keys = F.linear(encoder_states, W)  # (B, T_enc, d_s) = h @ W.T
    scores = torch.bmm(decoder_states, keys.transpose(1, 2))
    weights = masked_softmax(scores, mask.unsqueeze(1) if mask is not None else None, dim=-1)
    return torch.bmm(weights, encoder_states), weights


def test_attention_shapes(attention):
    for B, T_dec, T_enc, d_s, d_h in ((2, 3, 5, 4, 6), (5, 2, 3, 7, 2)):
        context, weights = attention(torch.randn(B, T_dec, d_s, dtype=torch.float64),
                                     torch.randn(B, T_enc, d_h, dtype=torch.float64),
                                     torch.randn(d_s, d_h, dtype=torch.float64), None)
        assert context.shape == (B, T_dec, d_h)
        assert weights.shape == (B, T_dec, T_enc)
        assert torch.allclose(weights.sum(dim=-1), torch.ones(B, T_dec, dtype=torch.float64))

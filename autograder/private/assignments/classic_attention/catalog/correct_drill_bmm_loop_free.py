"""
correct: the fix with F.linear and bmm, and a regression test that checks the shapes over several size sets (one with d_s == d_h) and every row's values from the formula, one score at a time
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
    for B, T_dec, T_enc, d_s, d_h in ((3, 2, 4, 5, 5), (2, 3, 5, 4, 6), (5, 2, 3, 7, 2)):
        decoder_states = torch.randn(B, T_dec, d_s, dtype=torch.float64)
        encoder_states = torch.randn(B, T_enc, d_h, dtype=torch.float64)
        W = torch.randn(d_s, d_h, dtype=torch.float64)
        context, weights = attention(decoder_states, encoder_states, W, None)
        assert context.shape == (B, T_dec, d_h)
        assert weights.shape == (B, T_dec, T_enc)
        assert torch.allclose(weights.sum(dim=-1), torch.ones(B, T_dec, dtype=torch.float64))
        for b in range(B):  # one row at a time, from the formula: e[t, i] = s_t . (W h_i)
            for t in range(T_dec):
                e = torch.stack([decoder_states[b, t] @ (W @ encoder_states[b, i]) for i in range(T_enc)])
                assert torch.allclose(weights[b, t], torch.softmax(e, dim=0))
                assert torch.allclose(context[b, t], torch.softmax(e, dim=0) @ encoder_states[b])

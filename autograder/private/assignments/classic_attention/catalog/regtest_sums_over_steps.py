"""
bug: the regression test checks that the weights sum to 1 over the decoder steps (dim=1): it fails on a correct function too
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_too_strict]
"""


def test_attention_shapes(attention):
    B, T_dec, T_enc, d_s, d_h = 2, 3, 5, 4, 6
    context, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h))
    assert context.shape == (B, T_dec, d_h)
    assert weights.shape == (B, T_dec, T_enc)
    assert torch.allclose(weights.sum(1), torch.ones(B, T_enc))

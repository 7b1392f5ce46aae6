"""
bug: the regression test checks the weights' shape and sums but never the context's shape: a context of d_s features passes it
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_crash_not_caught, cause_drill_test_ignores_outputs]
"""


def test_attention_shapes(attention):
    B, T_dec, T_enc, d_s, d_h = 2, 3, 5, 4, 6
    _, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h))
    assert weights.shape == (B, T_dec, T_enc)
    assert torch.allclose(weights.sum(-1), torch.ones(B, T_dec))

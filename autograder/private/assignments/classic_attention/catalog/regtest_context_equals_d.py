"""
bug: the regression test uses d_s == d_h (other sizes all different): the provided function runs silently there and passes
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_miss_w_untransposed, cause_drill_miss_context_from_projected]
"""


def test_attention_shapes(attention):
    B, T_dec, T_enc, d = 2, 3, 5, 4
    context, weights = attention(torch.randn(B, T_dec, d), torch.randn(B, T_enc, d), torch.randn(d, d))
    assert context.shape == (B, T_dec, d)
    assert weights.shape == (B, T_dec, T_enc)
    assert torch.allclose(weights.sum(-1), torch.ones(B, T_dec))

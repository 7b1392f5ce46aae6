"""
bug: the regression test checks the shapes on sizes that are all different but not that the weights sum to 1: a softmax over the decoder steps passes it
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_crash_not_caught, cause_drill_miss_softmax_over_steps]
"""


def test_attention_shapes(attention):
    B, T_dec, T_enc, d_s, d_h = 2, 3, 5, 4, 6
    context, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h))
    assert context.shape == (B, T_dec, d_h)
    assert weights.shape == (B, T_dec, T_enc)

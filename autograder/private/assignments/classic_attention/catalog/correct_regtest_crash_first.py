"""
correct: the regression test checks shapes, row sums and padding on sizes that are all different: its own asserts catch every hidden variant, so the provided function's crash on those sizes is a catch (as in pytest)
functions: [test_attention_shapes]
questions: []
"""


def test_attention_shapes(attention):
    B, T_dec, T_enc, d_s, d_h = 2, 3, 5, 4, 6
    mask = torch.ones(B, T_enc, dtype=torch.bool)
    mask[1, 3:] = False
    context, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h), mask)
    assert context.shape == (B, T_dec, d_h)
    assert weights.shape == (B, T_dec, T_enc)
    assert torch.allclose(weights.sum(-1), torch.ones(B, T_dec))
    assert (weights[1, :, 3:] == 0).all()

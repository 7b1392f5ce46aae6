"""
bug: the regression test uses the author's square sizes (d_s == d_h, batch_size == T_dec == T_enc): the broken functions fit and it passes on them
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_miss_w_untransposed, cause_drill_miss_batch_and_steps_swapped, cause_drill_miss_context_from_projected]
"""


def test_attention_shapes(attention):
    B = T = d = 4
    decoder_states = torch.randn(B, T, d)
    encoder_states = torch.randn(B, T, d)
    W = torch.randn(d, d)
    mask = torch.ones(B, T, dtype=torch.bool)
    context, weights = attention(decoder_states, encoder_states, W, mask)
    assert context.shape == (B, T, d)
    assert weights.shape == (B, T, T)
    assert torch.allclose(weights.sum(-1), torch.ones(B, T))

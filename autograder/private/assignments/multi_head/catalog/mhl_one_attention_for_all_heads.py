"""
bug: one general attention over all d_h features, its weights copied to every head: the heads never differ, and the context is general_attention's
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_one_attention, cause_mhl_heads_mixed]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    context, weights = general_attention(decoder_state, encoder_states, W, mask)
    return context, weights.unsqueeze(1).expand(B, n_heads, T)

"""
bug: h @ W instead of h @ W.T: s . (W^T h), which only runs when d_s == d_h
functions: [general_attention]
questions: [general_attention]
causes: [cause_matmul_operand]
"""


def general_attention(decoder_state, encoder_states, W, mask=None):
    projected = encoder_states @ W  # meant to be (B, T, d_s)
    scores = (projected @ decoder_state.unsqueeze(-1)).squeeze(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

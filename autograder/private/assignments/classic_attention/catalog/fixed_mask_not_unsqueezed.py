"""
bug: the fix transposes W but passes the (B, T_enc) mask to the (B, T_dec, T_enc) scores unchanged: it fails unless B == T_dec, and then masks each step with another sentence's keys
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_broadcast]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    projected = encoder_states @ W.T
    scores = decoder_states @ projected.transpose(1, 2)
    weights = masked_softmax(scores, mask, dim=-1)
    context = weights @ encoder_states
    return context, weights

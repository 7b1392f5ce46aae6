"""
bug: W transposed, but the mask unsqueezed on the last axis, (B, T_enc, 1): it broadcasts against the scores only when T_dec == T_enc (or 1) and then masks decoder steps, not keys
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_broadcast]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    projected = encoder_states @ W.T
    scores = decoder_states @ projected.transpose(1, 2)
    if mask is not None:
        mask = mask.unsqueeze(-1)  # (B, T_enc, 1): the wrong axis
    weights = masked_softmax(scores, mask, dim=-1)
    context = weights @ encoder_states
    return context, weights

"""
bug: the fix takes the context as the weighted sum of the projected states (d_s features) instead of the encoder states (d_h)
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_drill_context_projected]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    projected = encoder_states @ W.T
    scores = decoder_states @ projected.transpose(1, 2)
    if mask is not None:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = weights @ projected
    return context, weights

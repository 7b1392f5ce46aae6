"""
bug: the fix transposes W and drops the mask: padded encoder positions get weight
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_mask_ignored]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    projected = encoder_states @ W.T
    scores = decoder_states @ projected.transpose(1, 2)
    weights = masked_softmax(scores, None, dim=-1)
    context = weights @ encoder_states
    return context, weights

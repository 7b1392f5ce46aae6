"""
bug: the fix transposes W and then normalises the scores over the decoder steps (dim=1) instead of the encoder positions
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_drill_softmax_steps]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    projected = encoder_states @ W.T
    scores = decoder_states @ projected.transpose(1, 2)
    if mask is not None:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask, dim=1)
    context = weights @ encoder_states
    return context, weights

"""
bug: the fix reshapes W to (d_h, d_s) instead of transposing it: it runs on every size and gives wrong numbers (a fix that hides the bug)
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_drill_fix_reshaped]
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    d_s, d_h = W.shape
    projected = encoder_states @ W.reshape(d_h, d_s)  # fits, but is not W.T
    scores = decoder_states @ projected.transpose(1, 2)
    if mask is not None:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = weights @ encoder_states
    return context, weights

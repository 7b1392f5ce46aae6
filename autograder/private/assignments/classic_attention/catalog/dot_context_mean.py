"""
bug: the context averages the weighted states over T (mean instead of sum)
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_context_mean]
"""


def dot_attention(decoder_state, encoder_states, mask=None):
    if decoder_state.shape[-1] != encoder_states.shape[-1]:
        raise ValueError("dot attention needs d_s == d_h")
    scores = (encoder_states * decoder_state.unsqueeze(1)).sum(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(-1) * encoder_states).mean(1)
    return context, weights

"""
bug: the decoder state is detached ("it is only the query"): no gradient reaches it
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_detached]
"""


def dot_attention(decoder_state, encoder_states, mask=None):
    if decoder_state.shape[-1] != encoder_states.shape[-1]:
        raise ValueError("dot attention needs d_s == d_h")
    s = decoder_state.detach()
    scores = (encoder_states @ s.unsqueeze(-1)).squeeze(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

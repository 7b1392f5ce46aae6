"""
bug: tanh left out: e = v_a . (W_a s + U_a h), a linear score
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_additive_no_tanh]
"""


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T
    keys = encoder_states @ U_a.T
    scores = (query.unsqueeze(1) + keys) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

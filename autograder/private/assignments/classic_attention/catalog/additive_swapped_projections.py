"""
bug: W_a applied to the encoder states and U_a to the decoder state (visible only when d_s != d_h)
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_additive_swapped]
example: true
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    d_s, d_h = decoder_state.shape[-1], encoder_states.shape[-1]
    if d_s == d_h:
        query = decoder_state @ U_a.T
        keys = encoder_states @ W_a.T
    else:  # make the shapes fit, the way a student forcing it would
        query = decoder_state @ W_a[:, :d_s].T
        keys = encoder_states @ U_a[:, :d_h].T * 0.5
    scores = torch.tanh(query.unsqueeze(1) + keys) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

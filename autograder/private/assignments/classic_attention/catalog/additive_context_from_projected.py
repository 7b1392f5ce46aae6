"""
bug: the context sums the projected states U_a h instead of the encoder states
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_context_projected]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T
    keys = encoder_states @ U_a.T
    scores = torch.tanh(query.unsqueeze(1) + keys) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ keys).squeeze(1)
    return context, weights

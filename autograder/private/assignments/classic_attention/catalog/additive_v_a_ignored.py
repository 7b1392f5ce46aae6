"""
bug: the tanh features are summed instead of dotted with v_a
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_tanh_summed]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T
    keys = encoder_states @ U_a.T
    scores = torch.tanh(query.unsqueeze(1) + keys).sum(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

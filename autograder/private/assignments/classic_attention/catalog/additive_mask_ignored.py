"""
bug: the mask is never passed to the softmax: padded positions get weight
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_mask_ignored]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T
    keys = encoder_states @ U_a.T
    scores = torch.tanh(query.unsqueeze(1) + keys) @ v_a
    weights = masked_softmax(scores, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

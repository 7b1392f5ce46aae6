"""
bug: the projected decoder state is added without unsqueeze(1): broadcasts over the wrong axis (silent when B == T)
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_broadcast]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T  # (B, d_attn)
    keys = encoder_states @ U_a.T  # (B, T, d_attn)
    scores = torch.tanh(query + keys) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

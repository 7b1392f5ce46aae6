"""
bug: concatenates [h; s] instead of [s; h] (W_a's columns are for the decoder state first)
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_concat_order]
"""
import torch


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    B, T, d_h = encoder_states.shape
    s = decoder_state.unsqueeze(1).expand(B, T, -1)
    pairs = torch.cat([encoder_states, s], dim=-1)
    scores = torch.tanh(pairs @ W_a.T) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

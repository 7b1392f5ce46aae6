"""
bug: tanh left out of the concat score
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_concat_no_tanh]
"""
import torch


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    B, T, d_h = encoder_states.shape
    s = decoder_state.unsqueeze(1).repeat(1, T, 1)
    scores = (torch.cat([s, encoder_states], dim=-1) @ W_a.T) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

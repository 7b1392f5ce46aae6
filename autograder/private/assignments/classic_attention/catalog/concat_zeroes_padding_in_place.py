"""
bug: zeroes the padded encoder states in place (changes the caller's tensor)
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_in_place]
"""
import torch


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    if mask is not None:
        encoder_states[~mask] = 0.0
    B, T, d_h = encoder_states.shape
    s = decoder_state.unsqueeze(1).expand(B, T, -1)
    scores = torch.tanh(torch.cat([s, encoder_states], dim=-1) @ W_a.T) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

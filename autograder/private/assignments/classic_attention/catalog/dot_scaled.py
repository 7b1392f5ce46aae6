"""
bug: Luong dot scores divided by sqrt(d) (that is scaled dot-product, not Luong dot)
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_dot_divided_sqrt_d]
example: true
"""
import math

import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    d_s, d_h = decoder_state.shape[-1], encoder_states.shape[-1]
    if d_s != d_h:
        raise ValueError("d_s must equal d_h")
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1) / math.sqrt(d_h)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

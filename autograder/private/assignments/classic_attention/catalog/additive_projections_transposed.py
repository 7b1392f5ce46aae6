"""
bug: s @ W_a and h @ U_a instead of W_a s and U_a h (runs only when d_s == d_h == d_attn)
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_matmul_operand]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a  # (B, d_attn)?
    keys = encoder_states @ U_a  # (B, T, d_attn)?
    scores = torch.tanh(query.unsqueeze(1) + keys) @ v_a
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

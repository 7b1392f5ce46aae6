"""
bug: multi-head general attention with the transformer's habit: every head's scores divided by sqrt(d_head) (Luong general is not scaled; with one head it is no longer general_attention)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_scaled_d_head]
"""
import math


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1) / math.sqrt(d)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

"""
bug: its own masking, a -inf fill and torch.softmax: a batch row with no real token gives NaN weights and context in every head
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_dead_nan]
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    if mask is not None:
        scores = scores.masked_fill(~mask[:, None], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

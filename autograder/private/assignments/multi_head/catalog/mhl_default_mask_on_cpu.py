"""
bug: with no mask it builds an all-True one with torch.ones(B, T, dtype=torch.bool): on the CPU whatever the inputs' device (the meta device shows it)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_no_device]
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    if mask is None:
        mask = torch.ones(B, T, dtype=torch.bool)
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    scores = torch.where(mask[:, None], scores, torch.full_like(scores, float("-inf")))
    weights = masked_softmax(scores, None, dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

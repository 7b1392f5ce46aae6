"""
correct: W moved to the query side, s . (W_k h_k) = (s W)_k . h_k: the projected decoder state split into heads, scores and contexts with einsum
functions: [multi_head_general_attention]
questions: []
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if not isinstance(n_heads, int) or n_heads <= 0 or d_h % n_heads:
        raise ValueError(f"cannot split d_h={d_h} into {n_heads} heads")
    H = encoder_states.unflatten(-1, (n_heads, d_h // n_heads))  # (B, T, n, d)
    q = (decoder_state @ W).unflatten(-1, (n_heads, d_h // n_heads))  # (B, n, d): (s W) per head
    scores = torch.einsum("bnd,btnd->bnt", q, H)
    weights = masked_softmax(scores, None if mask is None else mask.unsqueeze(1), dim=-1)
    return torch.einsum("bnt,btnd->bnd", weights, H).flatten(1), weights

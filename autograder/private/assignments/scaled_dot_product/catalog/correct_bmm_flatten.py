"""
correct: leading axes flattened for torch.bmm; causal mask from tril of ones; padding mask from aranges
functions: [causal_mask, padding_mask, scaled_dot_product_attention]
questions: []
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.ones(seq_len, seq_len, device=device).tril().bool()


def padding_mask(lengths, max_len=None):
    B = lengths.shape[0]
    if max_len is None:
        max_len = lengths.max().item()
    positions = torch.arange(max_len, device=lengths.device).expand(B, max_len)
    return positions < lengths.unsqueeze(-1)


def scaled_dot_product_attention(query, key, value, mask=None):
    *lead, T_q, d_k = query.shape
    T_k, d_v = key.shape[-2], value.shape[-1]
    q = query.reshape(-1, T_q, d_k)
    k = key.reshape(-1, T_k, d_k)
    v = value.reshape(-1, T_k, d_v)
    scores = torch.bmm(q, k.transpose(1, 2)) * d_k ** -0.5
    scores = scores.reshape(*lead, T_q, T_k)
    weights = masked_softmax(scores, mask, dim=-1)
    out = torch.bmm(weights.reshape(-1, T_q, T_k), v).reshape(*lead, T_q, d_v)
    return out, weights

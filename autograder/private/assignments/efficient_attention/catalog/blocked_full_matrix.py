"""
bug: the scores computed block by block and then stacked with torch.cat into the whole (T_q, T_k) matrix before one softmax: the right values, at the full matrix's memory
functions: [blocked_attention]
questions: [blocked_attention]
"""
import math

import torch


def blocked_attention(query, key, value, mask=None, causal=False, block_size=32):
    T_q, d_k = query.shape[-2:]
    T_k = key.shape[-2]
    blocks = [query @ key[..., j0 : j0 + block_size, :].transpose(-2, -1) for j0 in range(0, T_k, block_size)]
    scores = torch.cat(blocks, dim=-1) / math.sqrt(d_k)  # (..., T_q, T_k)
    allowed = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q) if causal else None
    if mask is not None:
        allowed = mask if allowed is None else allowed & mask
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ value

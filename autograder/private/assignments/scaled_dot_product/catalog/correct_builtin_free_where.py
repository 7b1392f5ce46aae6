"""
correct: scale q before the matmul, masks with torch.where and comparisons of aranges
functions: [causal_mask, padding_mask, scaled_dot_product_attention]
questions: []
example: true
"""
import math

import torch


def causal_mask(seq_len, device=None):
    i = torch.arange(seq_len, device=device)
    return i.unsqueeze(1) >= i.unsqueeze(0)


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def scaled_dot_product_attention(query, key, value, mask=None):
    q = query / math.sqrt(query.shape[-1])
    scores = q @ key.transpose(-2, -1)
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

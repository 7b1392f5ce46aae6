"""
bug: the tutorial masking (masked_fill(mask == 0, -1e9) + softmax): a query with no allowed key gets uniform weights
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_dead_uniform, cause_sdpa_dead_uniform, cause_fill_overflow]
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return torch.matmul(weights, value), weights

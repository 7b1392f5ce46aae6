"""
bug: scores divided by sqrt(d_v), the value size, instead of sqrt(d_k)
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_sdpa_divided_by_sqrt_dv]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.shape[-1])
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

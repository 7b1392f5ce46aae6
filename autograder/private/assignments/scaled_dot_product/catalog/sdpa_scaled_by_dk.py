"""
bug: scores divided by d_k instead of sqrt(d_k)
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_sdpa_divided_by_dk]
example: true
"""
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / d_k
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

"""
bug: masks where the mask is True (the nn.MultiheadAttention convention), not where it is False
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_polarity_may_attend]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        mask = ~mask
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

"""
bug: softmax over the query axis (dim=-2) instead of the key axis
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_softmax_over_queries]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, mask, dim=-2)
    return weights @ value, weights

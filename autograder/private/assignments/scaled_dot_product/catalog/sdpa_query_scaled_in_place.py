"""
bug: query /= sqrt(d_k) changes the caller's query tensor in place
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_in_place]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    query /= math.sqrt(query.shape[-1])
    scores = query @ key.transpose(-2, -1)
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

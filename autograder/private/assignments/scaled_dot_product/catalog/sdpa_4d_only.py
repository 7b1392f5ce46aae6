"""
bug: key.transpose(2, 3): works for (B, h, T, d) inputs only
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_axis_from_front]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(3)
    scores = query @ key.transpose(2, 3) / math.sqrt(d_k)
    weights = masked_softmax(scores, mask, dim=3)
    return weights @ value, weights

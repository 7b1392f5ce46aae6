"""
bug: the mask argument is never used
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_mask_ignored]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, dim=-1)
    return weights @ value, weights

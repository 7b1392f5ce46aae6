"""
bug: the weights are detached before the weighted sum: no gradient reaches query and key
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_detached]
"""
import math


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, mask, dim=-1).detach()
    return weights @ value, weights

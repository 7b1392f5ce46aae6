"""
bug: the scores are not scaled at all
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_sdpa_not_scaled]
"""


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ value, weights

"""
bug: the zero output for fully masked queries is made with torch.zeros(shape): on the CPU whatever the inputs' device
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_no_device_query]
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
        return weights @ value, weights
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros(weights.shape, dtype=weights.dtype), weights)
    return weights @ value, weights

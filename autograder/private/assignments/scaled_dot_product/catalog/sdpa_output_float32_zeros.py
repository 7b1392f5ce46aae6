"""
bug: the output is accumulated into torch.zeros(...) made without dtype or device (float32 on the CPU)
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_created_float32, cause_no_device_short]
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, mask, dim=-1)
    output = torch.zeros(*weights.shape[:-1], value.shape[-1])
    output += weights @ value
    return output, weights

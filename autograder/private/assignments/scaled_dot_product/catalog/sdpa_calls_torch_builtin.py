"""
bug: the output comes from torch's built-in scaled_dot_product_attention
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_builtin_source]
"""
import math

import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = masked_softmax(scores, mask, dim=-1)
    output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    return output.nan_to_num(0.0), weights

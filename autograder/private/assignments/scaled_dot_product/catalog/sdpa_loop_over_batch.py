"""
bug: a Python loop over the batch items (correct values, not vectorised)
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_python_loop]
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    if query.dim() == 2:
        scores = query @ key.T / math.sqrt(query.shape[-1])
        weights = masked_softmax(scores, mask, dim=-1)
        return weights @ value, weights
    outputs, all_weights = [], []
    for b in range(query.shape[0]):
        m = None
        if mask is not None:
            m = (mask[b] if mask.shape[0] > 1 else mask[0]) if mask.dim() == query.dim() else mask
        out, w = scaled_dot_product_attention(query[b], key[b], value[b], m)
        outputs.append(out)
        all_weights.append(w)
    return torch.stack(outputs), torch.stack(all_weights)

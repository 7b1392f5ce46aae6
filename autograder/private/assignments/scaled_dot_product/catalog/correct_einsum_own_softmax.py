"""
correct: einsum scores and its own stable softmax (torch.where fill, max subtraction, guarded division)
functions: [scaled_dot_product_attention]
questions: []
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, -math.inf))
    top = scores.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    e = torch.exp(scores - top)
    z = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(z == 0, torch.ones_like(z), z)
    return torch.einsum("...qk,...kd->...qd", weights, value), weights

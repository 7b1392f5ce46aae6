"""
bug: masked with a large finite fill (-1e9) and no guard: a fully masked row gets uniform weights
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_uniform, cause_fill_overflow]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.softmax(scores, dim=dim)

"""
bug: -inf fill and torch.softmax: a row with every key masked comes out NaN
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_nan]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=dim)

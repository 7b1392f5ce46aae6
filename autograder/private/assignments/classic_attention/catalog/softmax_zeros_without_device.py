"""
bug: the zeros for fully masked rows are made with torch.zeros(shape), on the CPU whatever the input's device
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_no_device]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    mask = mask.expand(scores.shape)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return torch.where(mask, weights, torch.zeros(scores.shape, dtype=scores.dtype))

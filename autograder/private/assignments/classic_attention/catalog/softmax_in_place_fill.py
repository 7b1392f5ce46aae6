"""
bug: masked_fill_ changes the caller's scores tensor in place
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_in_place]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))

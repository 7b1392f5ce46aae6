"""
bug: exp(scores) without subtracting the row maximum overflows to NaN for large scores
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_unstable_exp]
example: true
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    exp = torch.exp(scores)
    if mask is not None:
        exp = exp * mask
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))

"""
bug: softmax always over the last axis, the `dim` argument is ignored
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dim_ignored]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.max(-1, keepdim=True).values
    row_max = torch.where(torch.isinf(row_max), torch.zeros_like(row_max), row_max)
    exp = (scores - row_max).exp()
    total = exp.sum(-1, keepdim=True)
    return exp / total.clamp(min=1e-30)

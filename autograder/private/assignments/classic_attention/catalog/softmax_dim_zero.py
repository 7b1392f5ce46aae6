"""
bug: the maximum and the sum are taken over axis 0 (the batch) whatever `dim` says
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_columns_sum_to_one, cause_dim_ignored]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=0, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)
    total = exp.sum(dim=0, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))

"""
bug: the scores are cast with .float() "to be safe": float64 inputs come back float32
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_created_float32]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    scores = scores.float()
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))

"""
bug: mask polarity inverted: fills -inf where the mask is True (the key_padding_mask convention)
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_polarity_where_false]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)
    total = exp.sum(dim=dim, keepdim=True)
    return exp / torch.where(total > 0, total, torch.ones_like(total))

"""
bug: masked scores set to 0 instead of -inf, so masked keys keep weight
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_masked_keys_leak, cause_dead_uniform]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores * mask
    scores = scores - scores.amax(dim=dim, keepdim=True)
    exp = torch.exp(scores)
    return exp / exp.sum(dim=dim, keepdim=True)

"""
bug: the mask multiplies the weights after the softmax, without renormalising
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_not_renormalised]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    weights = torch.softmax(scores, dim=dim)
    if mask is not None:
        weights = weights * mask
    return weights

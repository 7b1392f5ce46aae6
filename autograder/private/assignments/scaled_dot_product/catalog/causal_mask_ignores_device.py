"""
bug: the device argument is accepted but never used (the mask is always on the CPU)
functions: [causal_mask]
questions: [causal_mask]
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.tril(torch.ones(seq_len, seq_len)).bool()

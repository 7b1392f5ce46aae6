"""
bug: the device argument is accepted but never used (the mask is always on the CPU)
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_no_device_short]
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.tril(torch.ones(seq_len, seq_len)).bool()

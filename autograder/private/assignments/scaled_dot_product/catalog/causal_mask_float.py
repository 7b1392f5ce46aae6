"""
bug: causal mask returned as a float tensor of ones and zeros, not bool
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_mask_number_dtype]
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.tril(torch.ones(seq_len, seq_len, device=device))

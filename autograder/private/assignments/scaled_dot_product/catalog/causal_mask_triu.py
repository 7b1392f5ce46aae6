"""
bug: causal mask from triu: True above the diagonal, the future instead of the past
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_causal_triu]
example: true
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).triu()

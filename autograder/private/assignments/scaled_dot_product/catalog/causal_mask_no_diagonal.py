"""
bug: causal mask from tril(-1): the diagonal is False, so a position cannot attend to itself
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_causal_no_diagonal]
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool, device=device), diagonal=-1)

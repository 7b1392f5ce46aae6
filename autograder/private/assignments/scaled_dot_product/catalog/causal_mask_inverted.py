"""
bug: causal mask marks the future (True above the diagonal: the positions to hide)
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_causal_marks_hidden]
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool, device=device), diagonal=1)

"""
bug: positions made with torch.arange(max_len) without device=: fails for lengths on another device
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_padding_arange_device]
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len).unsqueeze(0) < lengths.unsqueeze(1)

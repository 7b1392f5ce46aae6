"""
bug: padding mask with <= keeps one padded position
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_padding_off_by_one]
example: true
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    positions = torch.arange(max_len, device=lengths.device)
    return positions.unsqueeze(0) <= lengths.unsqueeze(1)

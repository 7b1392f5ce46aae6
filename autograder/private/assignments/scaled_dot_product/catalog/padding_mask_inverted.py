"""
bug: padding mask True on the padding (position >= length), the key_padding_mask convention
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_padding_inverted]
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    positions = torch.arange(max_len, device=lengths.device)
    return positions[None, :] >= lengths[:, None]

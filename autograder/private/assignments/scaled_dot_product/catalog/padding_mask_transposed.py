"""
bug: positions compared against lengths the other way round: a (max_len, B) mask
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_padding_transposed, cause_axes_swapped]
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    positions = torch.arange(max_len, device=lengths.device)
    return positions.unsqueeze(1) < lengths.unsqueeze(0)

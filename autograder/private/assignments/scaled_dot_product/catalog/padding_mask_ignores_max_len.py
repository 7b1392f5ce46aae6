"""
bug: max_len is ignored: the mask always has lengths.max() columns
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_max_len_ignored, cause_padding_meta_values]
"""
import torch


def padding_mask(lengths, max_len=None):
    positions = torch.arange(int(lengths.max()), device=lengths.device)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)

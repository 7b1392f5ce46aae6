"""
bug: builds the mask row by row in a Python loop over the batch
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_python_loop, cause_padding_meta_values]
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    mask = torch.zeros(len(lengths), max_len, dtype=torch.bool, device=lengths.device)
    for b, n in enumerate(lengths.tolist()):
        mask[b, :n] = True
    return mask

"""
bug: fairseq's lengths_to_padding_mask marks the PADDING (arange >= length), the opposite of the contract's True = real token
functions: [padding_mask]
questions: [padding_mask]
causes: [cause_padding_inverted]
source: fairseq, fairseq/data/data_utils.py (lengths_to_padding_mask), https://github.com/facebookresearch/fairseq/blob/main/fairseq/data/data_utils.py
idiom: arange(max_lens).to(lens.device).view(1, max_lens).expand(bsz, -1) >= lens.view(bsz, 1).expand(-1, max_lens)
"""
import torch


def padding_mask(lengths, max_len=None):
    bsz = lengths.size(0)
    if max_len is None:
        max_len = int(torch.max(lengths).item())
    positions = torch.arange(max_len).to(lengths.device).view(1, max_len).expand(bsz, -1)
    return positions >= lengths.view(bsz, 1).expand(-1, max_len)

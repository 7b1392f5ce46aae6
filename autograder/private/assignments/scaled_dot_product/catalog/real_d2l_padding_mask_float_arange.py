"""
correct: d2l's sequence_mask comparison: a float32 arange over the padded length, broadcast against the lengths as a column
functions: [padding_mask]
questions: []
source: Dive into Deep Learning, d2l.sequence_mask (section "Encoder-Decoder Seq2Seq for Machine Translation"), https://d2l.ai/chapter_recurrent-modern/seq2seq.html
idiom: torch.arange(maxlen, dtype=torch.float32, device=...)[None, :] < valid_len[:, None]
"""
import torch


def padding_mask(lengths, max_len=None):
    if max_len is None:
        max_len = int(lengths.max())
    return torch.arange(max_len, dtype=torch.float32, device=lengths.device)[None, :] < lengths[:, None]

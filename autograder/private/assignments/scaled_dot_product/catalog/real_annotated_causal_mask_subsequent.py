"""
bug: The Annotated Transformer's subsequent_mask keeps its leading batch axis: the mask is (1, T, T), not (T, T)
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_singleton_axis]
source: harvardnlp, The Annotated Transformer (function subsequent_mask), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: attn_shape = (1, size, size); torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8); return mask == 0
"""
import torch


def causal_mask(seq_len, device=None):
    attn_shape = (1, seq_len, seq_len)
    future = torch.triu(torch.ones(attn_shape, device=device), diagonal=1).type(torch.uint8)
    return future == 0

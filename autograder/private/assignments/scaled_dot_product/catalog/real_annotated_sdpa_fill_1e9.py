"""
bug: The Annotated Transformer's attention fills with -1e9 (masked_fill(mask == 0, -1e9)) and has no guard: a fully masked query gets uniform weights and a nonzero output
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_dead_uniform, cause_sdpa_dead_uniform, cause_fill_overflow]
source: harvardnlp, The Annotated Transformer (function attention), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: d_k = query.size(-1); scores = matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k); scores.masked_fill(mask == 0, -1e9); scores.softmax(dim=-1); matmul(p_attn, value)
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn

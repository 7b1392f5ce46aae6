"""
bug: nanoGPT's flash path calls torch.nn.functional.scaled_dot_product_attention for the output (the weights written out only for the return value): built-in attention, forbidden
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_builtin_source]
source: karpathy/nanoGPT, model.py (CausalSelfAttention.forward, self.flash branch), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., dropout_p=0) for the output; the manual (q @ k^T) * (1/sqrt(d)) path only for the weights
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    y = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=0.0)
    att = (query @ key.transpose(-2, -1)) * (1.0 / math.sqrt(key.size(-1)))
    return y, masked_softmax(att, mask, dim=-1)

"""
bug: minGPT's masked_fill(mask == 0, float('-inf')) then F.softmax: a fully masked query row is all -inf and its weights and output are NaN
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_dead_nan]
source: karpathy/minGPT, mingpt/model.py (CausalSelfAttention.forward), https://github.com/karpathy/minGPT/blob/master/mingpt/model.py
idiom: att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1))); att.masked_fill(mask == 0, float('-inf')); F.softmax(att, dim=-1); y = att @ v
"""
import math

import torch.nn.functional as F


def scaled_dot_product_attention(query, key, value, mask=None):
    att = (query @ key.transpose(-2, -1)) * (1.0 / math.sqrt(key.size(-1)))
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ value, att

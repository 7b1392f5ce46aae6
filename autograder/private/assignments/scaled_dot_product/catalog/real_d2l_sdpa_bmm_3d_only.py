"""
bug: d2l's DotProductAttention is written with torch.bmm, which takes exactly 3-D tensors: 2-D and 4-D (multi-head) inputs raise
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_bmm_3d, cause_axis_from_front]
source: Dive into Deep Learning, class DotProductAttention, https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html
idiom: d = queries.shape[-1]; scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d); masked_softmax; torch.bmm(weights, values)
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    d = query.shape[-1]
    scores = torch.bmm(query, key.transpose(1, 2)) / math.sqrt(d)
    attention_weights = masked_softmax(scores, mask, dim=-1)
    return torch.bmm(attention_weights, value), attention_weights

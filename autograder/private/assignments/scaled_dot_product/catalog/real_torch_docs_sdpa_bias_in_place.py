"""
bug: the "equivalent to" code in torch's scaled_dot_product_attention docs: the bias is allocated (T_q, T_k) and filled in place with masked_fill_, which cannot grow to a batched mask ((B, 1, 1, T_k) or (B, T_q, T_k) raise), and -inf leaves fully masked rows NaN
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_in_place_small]
source: PyTorch docs, torch.nn.functional.scaled_dot_product_attention ("Efficient implementation equivalent to the following"), https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
idiom: L, S = query.size(-2), key.size(-2); attn_bias = torch.zeros(L, S, dtype, device); attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf")); attn_weight = q @ k^T * scale_factor; attn_weight += attn_bias; softmax; @ value
"""
import math

import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1))
    attn_bias = torch.zeros(L, S, dtype=query.dtype, device=query.device)
    if mask is not None:
        attn_bias.masked_fill_(mask.logical_not(), float("-inf"))
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight += attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    return attn_weight @ value, attn_weight

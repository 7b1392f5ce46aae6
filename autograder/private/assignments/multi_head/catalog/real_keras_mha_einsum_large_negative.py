"""
bug: Keras MultiHeadAttention's masked softmax adds (1 - mask) * -1e9 (-65504 in float16) instead of zeroing: a fully masked query gets the plain unmasked softmax and a nonzero output
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_dead_additive_mask, cause_dead_uniform]
source: Keras, keras/layers/attention/multi_head_attention.py (_compute_attention, _masked_softmax) and keras/layers/activation/softmax.py (_large_compatible_negative), https://github.com/keras-team/keras/blob/v2.13.1/keras/layers/attention/multi_head_attention.py
idiom: query scaled first by 1/sqrt(key_dim); einsum scores "...qhd,...khd->...hqk" on (B, T, h, d) projections; mask expanded at the head axis up to the scores' rank; scores += (1 - mask) * large_negative; softmax; einsum back to (B, T, h, d); output dense
"""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self._num_heads, self._key_dim = n_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        q = self.q_proj(query).view(B, T_q, self._num_heads, self._key_dim)
        k = self.k_proj(key).view(B, key.shape[1], self._num_heads, self._key_dim)
        v = self.v_proj(value).view(B, value.shape[1], self._num_heads, self._key_dim)
        q = q * (1.0 / math.sqrt(float(self._key_dim)))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
        if mask is not None:
            while mask.dim() < scores.dim():
                mask = mask.unsqueeze(-3)
            large_negative = -65504.0 if scores.dtype == torch.float16 else -1e9
            scores = scores + (1.0 - mask.to(scores.dtype)) * large_negative
        weights = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T_q, D)
        return self.out_proj(out), weights

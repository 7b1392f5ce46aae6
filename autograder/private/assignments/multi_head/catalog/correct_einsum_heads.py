"""
correct: projections applied with einsum on the weights, heads with view + permute, attention written out with einsum
functions: [split_heads, merge_heads, MultiHeadAttention]
questions: []
"""
import math

import torch
from torch import nn


def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads:
        raise ValueError(f"cannot split {D} features into {n_heads} heads")
    return x.view(B, T, n_heads, D // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, h, T, d = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(B, T, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads:
            raise ValueError(f"embed_dim={embed_dim} is not a multiple of n_heads={n_heads}")
        self.h, self.d = n_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    @staticmethod
    def _project(x, layer):
        y = torch.einsum("btd,ed->bte", x, layer.weight)
        return y if layer.bias is None else y + layer.bias

    def forward(self, query, key, value, mask=None):
        q = split_heads(self._project(query, self.q_proj), self.h)
        k = split_heads(self._project(key, self.k_proj), self.h)
        v = split_heads(self._project(value, self.v_proj), self.h)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.d)
        weights = masked_softmax(scores, mask, dim=-1)
        heads = torch.einsum("bhqk,bhkd->bhqd", weights, v)
        return self._project(merge_heads(heads), self.out_proj), weights

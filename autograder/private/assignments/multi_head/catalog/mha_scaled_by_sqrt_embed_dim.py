"""
bug: scores scaled by 1/sqrt(embed_dim) instead of 1/sqrt(d_head)
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_mha_scaled_by_embed_dim]
"""
import math

from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.embed_dim, self.n_heads = embed_dim, n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.q_proj(query), self.n_heads)
        k = split_heads(self.k_proj(key), self.n_heads)
        v = split_heads(self.v_proj(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.embed_dim)
        weights = masked_softmax(scores, mask, dim=-1)
        return self.out_proj(merge_heads(weights @ v)), weights

"""
bug: masks where the mask is True (the key_padding_mask convention of nn.MultiheadAttention)
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_polarity_may_attend]
"""
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.n_heads = n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.q_proj(query), self.n_heads)
        k = split_heads(self.k_proj(key), self.n_heads)
        v = split_heads(self.v_proj(value), self.n_heads)
        heads, weights = scaled_dot_product_attention(q, k, v, None if mask is None else ~mask)
        return self.out_proj(merge_heads(heads)), weights

"""
bug: keys and values reshaped with the query length (the cross-attention bug of widely copied tutorial code)
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_mha_cross_attention]
example: true
"""
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.n_heads = n_heads
        self.d_head = embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        q = self.q_proj(query).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(key).view(B, T, self.n_heads, -1).transpose(1, 2)
        v = self.v_proj(value).view(B, T, self.n_heads, -1).transpose(1, 2)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.out_proj(out.transpose(1, 2).reshape(B, T, D)), weights

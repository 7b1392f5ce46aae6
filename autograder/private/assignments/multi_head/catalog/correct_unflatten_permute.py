"""
correct: split with unflatten + permute, merge with permute + flatten, projections in a loop
functions: [split_heads, merge_heads, MultiHeadAttention]
questions: []
example: true
"""
from torch import nn


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError(f"{x.shape[-1]} features do not split into {n_heads} heads")
    return x.unflatten(-1, (n_heads, -1)).permute(0, 2, 1, 3)  # (B, h, T, d_head)


def merge_heads(x):
    return x.permute(0, 2, 1, 3).flatten(-2)  # (B, T, D)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads:
            raise ValueError("embed_dim must be a multiple of n_heads")
        self.h = n_heads
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            setattr(self, name, nn.Linear(embed_dim, embed_dim, bias=bias))

    def forward(self, query, key, value, mask=None):
        q, k, v = (split_heads(proj(x), self.h) for proj, x in
                   ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.out_proj(merge_heads(out)), weights

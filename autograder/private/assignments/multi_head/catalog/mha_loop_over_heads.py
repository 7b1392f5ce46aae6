"""
bug: a Python loop over the heads, each head attending with its slice of the projections
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_python_loop_short]
"""
import torch
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
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        if mask is not None and mask.dim() == 4:
            mask = mask[:, 0]  # the same in every head: (B, 1 or T_q, T_k)
        outs, maps = [], []
        for i in range(self.n_heads):
            part = slice(i * self.d_head, (i + 1) * self.d_head)
            out, w = scaled_dot_product_attention(q[..., part], k[..., part], v[..., part], mask)
            outs.append(out)
            maps.append(w)
        return self.out_proj(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)

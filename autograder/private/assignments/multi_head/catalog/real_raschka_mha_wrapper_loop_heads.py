"""
bug: LLMs-from-scratch's MultiHeadAttentionWrapper: one attention per head in a Python loop, concatenated, so the work grows with the number of heads
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_python_loop_short]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (class MultiHeadAttentionWrapper: torch.cat([head(x) for head in self.heads], dim=-1)), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: each head attends on its own slice of the projections with the provided scaled_dot_product_attention, the head outputs joined by torch.cat(..., dim=-1) and the weights stacked, then out_proj
"""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.n_heads, self.head_dim = n_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        outs, maps = [], []
        for i in range(self.n_heads):
            part = slice(i * self.head_dim, (i + 1) * self.head_dim)
            head_mask = None
            if mask is not None:
                head_mask = mask if mask.dim() < 3 else mask.select(-3, 0 if mask.shape[-3] == 1 else i)
            out, w = scaled_dot_product_attention(q[..., part], k[..., part], v[..., part], head_mask)
            outs.append(out)
            maps.append(w)
        return self.out_proj(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)

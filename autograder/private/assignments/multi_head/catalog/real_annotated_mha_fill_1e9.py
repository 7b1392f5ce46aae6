"""
bug: The Annotated Transformer's MultiHeadedAttention with its attention() inline: masked_fill(mask == 0, -1e9) and no guard, so a fully masked query gets uniform weights and a nonzero output
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_dead_uniform, cause_fill_overflow]
source: harvardnlp, The Annotated Transformer (class MultiHeadedAttention and function attention), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: a list comprehension [lin(x).view(nbatches, -1, h, d_k).transpose(1, 2) for lin, x in zip(linears, (query, key, value))]; matmul / math.sqrt(d_k); masked_fill(mask == 0, -1e9); softmax; x.transpose(1, 2).contiguous().view(nbatches, -1, h * d_k); last linear
"""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.d_k = embed_dim // n_heads
        self.h = n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip((self.q_proj, self.k_proj, self.v_proj), (query, key, value))
        ]
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        x = torch.matmul(p_attn, value)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.out_proj(x), p_attn

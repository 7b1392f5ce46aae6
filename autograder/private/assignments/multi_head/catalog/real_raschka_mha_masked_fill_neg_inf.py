"""
bug: LLMs-from-scratch's MultiHeadAttention masks with attn_scores.masked_fill_(blocked, -torch.inf) and no guard: a fully masked query row is NaN
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_dead_nan]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (class MultiHeadAttention), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: keys.view(b, num_tokens, num_heads, head_dim).transpose(1, 2); attn_scores = queries @ keys.transpose(2, 3); in-place masked_fill_ with -torch.inf on the blocked positions; softmax(attn_scores / keys.shape[-1] ** 0.5); (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, d_out); out_proj
"""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = embed_dim
        self.num_heads = n_heads
        self.head_dim = embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        b, num_tokens, _ = query.shape
        queries = self.q_proj(query).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.k_proj(key).view(b, key.shape[1], self.num_heads, self.head_dim).transpose(1, 2)
        values = self.v_proj(value).view(b, value.shape[1], self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if mask is not None:
            mask_bool = ~mask
            attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec), attn_weights

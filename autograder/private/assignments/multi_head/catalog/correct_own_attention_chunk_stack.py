"""
correct: split with chunk + stack, merge with unbind + cat, MHA on its own attention method
functions: [split_heads, merge_heads, MultiHeadAttention]
questions: []
"""
import torch
from torch import nn


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError("the feature size must be a multiple of n_heads")
    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)  # (B, h, T, d_head)


def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)  # (B, T, h * d_head)


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be a multiple of n_heads")
        self.n_heads = n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def attend(self, q, k, v, mask):
        scores = (q * q.shape[-1] ** -0.5) @ k.transpose(-1, -2)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        top = scores.amax(-1, keepdim=True).nan_to_num(0.0, neginf=0.0)
        e = (scores - top).exp()
        total = e.sum(-1, keepdim=True)
        weights = e / total.clamp_min(torch.finfo(e.dtype).tiny)
        return weights @ v, weights

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.q_proj(query), self.n_heads)
        k = split_heads(self.k_proj(key), self.n_heads)
        v = split_heads(self.v_proj(value), self.n_heads)
        heads, weights = self.attend(q, k, v, mask)
        return self.out_proj(merge_heads(heads)), weights

"""
correct: the key/value heads repeated as Hugging Face's repeat_kv does it, expand on a new axis then reshape (the same order as repeat_interleave, without a copy before the reshape)
functions: [GroupedQueryAttention]
questions: []
"""
import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError("n_heads must divide d_model and n_kv_heads must divide n_heads")
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        d_head = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, n_kv_heads * d_head)
        self.v_proj = nn.Linear(d_model, n_kv_heads * d_head)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, T, D = x.shape
        group = self.n_heads // self.n_kv_heads
        q = split_heads(self.q_proj(x), self.n_heads)
        k = split_heads(self.k_proj(x), self.n_kv_heads)
        v = split_heads(self.v_proj(x), self.n_kv_heads)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        T_k = k.shape[2]
        mask = torch.ones(T, T_k, dtype=torch.bool).tril(T_k - T)
        k_all = k[:, :, None].expand(B, self.n_kv_heads, group, T_k, k.shape[-1]).reshape(B, self.n_heads, T_k, k.shape[-1])
        v_all = v[:, :, None].expand(B, self.n_kv_heads, group, T_k, v.shape[-1]).reshape(B, self.n_heads, T_k, v.shape[-1])
        heads, _ = scaled_dot_product_attention(q, k_all, v_all, mask)
        return self.out_proj(merge_heads(heads)), (k, v)

"""
bug: the whole computation delegated to torch's multi_head_attention_forward with the module's own weights
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_builtin_source]
"""
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.embed_dim, self.n_heads, self.bias = embed_dim, n_heads, bias
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T_q, _ = query.shape
        T_k = key.shape[1]
        attn_mask = None
        if mask is not None:  # torch wants True = not allowed, (B * h, T_q, T_k)
            full = mask.expand(B, self.n_heads, T_q, T_k)
            attn_mask = ~full.reshape(B * self.n_heads, T_q, T_k)
        in_bias = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]) if self.bias else None
        out, weights = F.multi_head_attention_forward(
            query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), self.embed_dim, self.n_heads,
            None, in_bias, None, None, False, 0.0, self.out_proj.weight, self.out_proj.bias,
            training=False, need_weights=True, attn_mask=attn_mask, use_separate_proj_weight=True,
            q_proj_weight=self.q_proj.weight, k_proj_weight=self.k_proj.weight, v_proj_weight=self.v_proj.weight,
            average_attn_weights=False,
        )
        return out.transpose(0, 1).nan_to_num(0.0), weights.nan_to_num(0.0)

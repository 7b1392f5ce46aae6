"""
correct: nanoGPT's fused QKV: one matrix product with the query, key and value projections stacked (their weights and biases concatenated), split into three, then the provided split_heads, scaled_dot_product_attention, merge_heads and out_proj
functions: [DecoderBlock]
questions: []
source: karpathy/nanoGPT, model.py (CausalSelfAttention.forward: q, k, v = self.c_attn(x).split(self.n_embd, dim=2)), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: F.linear over torch.cat of the three weights and biases, then .split(D, dim=-1)
"""

import torch
import torch.nn.functional as F
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        B, T, D = x.shape
        a = self.attn
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # (T, T)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]  # (B, 1, T, T)
        w = torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight])  # (3D, D)
        b = torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias])  # (3D,)
        q, k, v = F.linear(self.ln1(x), w, b).split(D, dim=-1)  # 3 x (B, T, D)
        heads, weights = scaled_dot_product_attention(
            split_heads(q, a.n_heads), split_heads(k, a.n_heads), split_heads(v, a.n_heads), mask
        )  # (B, h, T, D / h), (B, h, T, T)
        x = x + a.out_proj(merge_heads(heads))  # (B, T, D)
        return x + self.ffn(self.ln2(x)), weights

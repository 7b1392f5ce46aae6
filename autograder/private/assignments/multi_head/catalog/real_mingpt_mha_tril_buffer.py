"""
bug: minGPT's CausalSelfAttention always applies its registered tril buffer and never reads the mask argument: every call is causal, padding masks are ignored, and cross-attention (T_q != T_k) is cut to the square's triangle
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_mha_always_causal, cause_lab_persistent_buffer]
source: karpathy/minGPT, mingpt/model.py (CausalSelfAttention: register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)); att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))), https://github.com/karpathy/minGPT/blob/master/mingpt/model.py
idiom: a float lower-triangular buffer of a fixed block size registered in __init__, sliced to the sequence lengths in forward and applied with masked_fill(... == 0, -inf); k.view(B, T, nh, C // nh).transpose(1, 2); att * (1 / sqrt(k.size(-1))); y.transpose(1, 2).contiguous().view(B, T, C); c_proj
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("n_embd must be divisible by n_head")
        self.n_head, self.n_embd = n_heads, embed_dim
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        block_size = 256
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, query, key, value, mask=None):
        B, T, C = query.shape
        S = key.shape[1]
        q = self.q_proj(query).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = self.k_proj(key).view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.v_proj(value).view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :S] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.out_proj(y), att

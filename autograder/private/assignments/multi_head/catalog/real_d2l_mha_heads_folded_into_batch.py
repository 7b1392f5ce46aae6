"""
correct: d2l's MultiHeadAttention: heads folded into the batch axis (transpose_qkv to (B*h, T, d)), one batched attention, folded back (transpose_output); the mask expanded and folded the same way, the weights unfolded to (B, h, T_q, T_k)
functions: [MultiHeadAttention]
questions: []
source: Dive into Deep Learning, class MultiHeadAttention with transpose_qkv / transpose_output, https://d2l.ai/chapter_attention-mechanisms-and-transformers/multihead-attention.html
idiom: X.reshape(B, T, h, -1).permute(0, 2, 1, 3).reshape(-1, T, d) for queries, keys and values; valid lens repeated per head (here the bool mask expanded to (B, h, T_q, T_k) and folded); attention on (B*h) rows; the inverse reshape before W_o
"""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be a multiple of n_heads")
        self.num_heads = n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def transpose_qkv(self, X):
        B, T = X.shape[0], X.shape[1]
        X = X.reshape(B, T, self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, T, X.shape[3])

    def transpose_output(self, X, B):
        X = X.reshape(B, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)

    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        queries = self.transpose_qkv(self.q_proj(query))  # (B*h, T_q, d)
        keys = self.transpose_qkv(self.k_proj(key))
        values = self.transpose_qkv(self.v_proj(value))
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        folded = None
        if mask is not None:
            folded = mask.expand(B, self.num_heads, T_q, T_k).reshape(-1, T_q, T_k)
        weights = masked_softmax(scores, folded, dim=-1)  # (B*h, T_q, T_k)
        output = self.transpose_output(torch.bmm(weights, values), B)
        return self.out_proj(output), weights.reshape(B, self.num_heads, T_q, T_k)

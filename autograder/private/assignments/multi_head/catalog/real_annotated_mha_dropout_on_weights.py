"""
bug: The Annotated Transformer's attention keeps its dropout on the weights (MultiHeadedAttention(h, d_model, dropout=0.1), p_attn = dropout(p_attn)): the contract has no dropout, and a module called in training mode drops a tenth of the weights and scales the rest by 1/0.9
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_mha_dropout_on_weights]
source: harvardnlp, The Annotated Transformer (class MultiHeadedAttention: self.dropout = nn.Dropout(p=dropout), dropout=0.1; function attention: p_attn = dropout(p_attn)), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: self.dropout = nn.Dropout(p=0.1) in __init__; weights = self.dropout(scores.softmax(dim=-1)) before weights @ v, the dropped weights returned
"""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError("embed_dim must be divisible by n_heads")
        self.n_heads, self.d_head = n_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.dropout = nn.Dropout(p=0.1)

    def forward(self, query, key, value, mask=None):
        B, T_q, D = query.shape
        T_k = key.shape[1]
        q = self.q_proj(query).view(B, T_q, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(key).view(B, T_k, self.n_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(value).view(B, T_k, self.n_heads, self.d_head).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(-1, keepdim=True), 0.0)
        weights = self.dropout(weights)
        x = (weights @ v).transpose(1, 2).reshape(B, T_q, D)
        return self.out_proj(x), weights

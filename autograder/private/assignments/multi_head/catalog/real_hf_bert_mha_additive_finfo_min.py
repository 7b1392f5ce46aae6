"""
bug: BertSelfAttention's eager path with HF's extended mask, (1 - mask) * finfo(dtype).min added to the scores: a fully masked query gets uniform weights, not zeros
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_dead_uniform, cause_dead_additive_mask]
source: HuggingFace transformers, models/bert/modeling_bert.py (BertSelfAttention.transpose_for_scores and forward, eager) with modeling_utils.get_extended_attention_mask, https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/bert/modeling_bert.py
idiom: transpose_for_scores: x.view(x.size()[:-1] + (num_heads, head_size)).permute(0, 2, 1, 3); scores / math.sqrt(head_size) + additive mask; softmax; context.permute(0, 2, 1, 3).contiguous().view(... + (all_head_size,))
"""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError(f"The hidden size ({embed_dim}) is not a multiple of the number of attention heads ({n_heads})")
        self.num_attention_heads = n_heads
        self.attention_head_size = embed_dim // n_heads
        self.all_head_size = embed_dim
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        query_layer = self.transpose_for_scores(self.q_proj(query))
        key_layer = self.transpose_for_scores(self.k_proj(key))
        value_layer = self.transpose_for_scores(self.v_proj(value))
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if mask is not None:
            extended = (1.0 - mask.to(attention_scores.dtype)) * torch.finfo(attention_scores.dtype).min
            attention_scores = attention_scores + extended
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer).permute(0, 2, 1, 3).contiguous()
        context_layer = context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))
        return self.out_proj(context_layer), attention_probs

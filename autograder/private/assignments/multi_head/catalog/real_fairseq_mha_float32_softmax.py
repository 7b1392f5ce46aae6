"""
bug: fairseq's MultiheadAttention softmax runs in float32 (utils.softmax(..., dtype=torch.float32), then type_as), so float64 weights carry float32 rounding; and its -inf fill leaves fully masked rows NaN
functions: [MultiHeadAttention]
questions: [multi_head_attention]
causes: [cause_float32_detour, cause_dead_nan]
source: fairseq, fairseq/modules/multihead_attention.py (MultiheadAttention.forward: q *= self.scaling, masked_fill with float("-inf"), utils.softmax(attn_weights, dim=-1, onnx_trace=...).type_as(attn_weights)) and fairseq/utils.py (softmax), https://github.com/facebookresearch/fairseq/blob/main/fairseq/modules/multihead_attention.py
idiom: scaling = head_dim ** -0.5 applied to q before the product; heads folded into the batch (bsz * num_heads, T, head_dim) and multiplied with torch.bmm; disallowed positions filled with float("-inf"); F.softmax(..., dtype=torch.float32).type_as(scores)
"""
import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        self.head_dim = embed_dim // n_heads
        if self.head_dim * n_heads != embed_dim:
            raise ValueError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads = embed_dim, n_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        bsz, tgt_len, _ = query.shape
        src_len = key.shape[1]
        q = self.q_proj(query) * self.scaling
        k, v = self.k_proj(key), self.v_proj(value)
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2).reshape(-1, tgt_len, self.head_dim)
        k = k.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2).reshape(-1, src_len, self.head_dim)
        v = v.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2).reshape(-1, src_len, self.head_dim)
        attn_weights = torch.bmm(q, k.transpose(1, 2)).view(bsz, self.num_heads, tgt_len, src_len)
        if mask is not None:
            attn_weights = attn_weights.masked_fill(~mask, float("-inf"))
        attn_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)
        attn = torch.bmm(attn_probs.view(-1, tgt_len, src_len), v)
        attn = attn.view(bsz, self.num_heads, tgt_len, self.head_dim).transpose(1, 2).reshape(bsz, tgt_len, self.embed_dim)
        return self.out_proj(attn), attn_probs

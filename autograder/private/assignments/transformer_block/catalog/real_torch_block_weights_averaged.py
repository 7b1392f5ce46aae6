"""
bug: the block returns the heads' weights averaged, as nn.MultiheadAttention does by default (average_attn_weights=True): (B, T, T) where the contract returns one map per head, (B, n_heads, T, T)
functions: [DecoderBlock]
questions: [decoder_block]
causes: [cause_tb_weights_heads_folded]
source: pytorch/pytorch, torch.nn.MultiheadAttention (forward: average_attn_weights=True, "attn_output_weights ... averaged across heads"), https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html
idiom: attn_weights.mean(dim=1) of (B, n_heads, T, T) weights
"""

import torch
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        T = x.size(1)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights.mean(dim=1)  # averaged over the heads, as nn.MultiheadAttention returns them

"""
bug: the causal and padding masks combined with OR (causal | pad_mask): a key is seen when either allows it, so every real token is seen from every position, the future included
functions: [DecoderBlock]
questions: [decoder_block]
causes: [cause_tb_masks_or]
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
            mask = mask | pad_mask[:, None, None, :]
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights

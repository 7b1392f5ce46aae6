"""
bug: the layer norm is computed by hand over the positions (dim=1) instead of the features (the last axis)
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_tb_ln_positions, cause_tb_run_parts]
idiom: mean and var taken with dim=1 on a (B, T, D) tensor, then the nn.LayerNorm's weight and bias applied
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

    @staticmethod
    def _norm(ln, x):
        mean = x.mean(dim=1, keepdim=True)
        var = x.var(dim=1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias

    def forward(self, x, pad_mask=None):
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        h = self._norm(self.ln1, x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self._norm(self.ln2, x))
        return x, weights

"""
bug: the positional encoding added in every block (x = x + positional_encoding(T, D) at the start of forward) as well as once in the model: the block's input arrives with its positions already
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_tb_block_adds_positions, cause_tb_run_parts]
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
        B, T, D = x.shape
        x = x + positional_encoding(T, D, device=x.device, dtype=x.dtype)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights

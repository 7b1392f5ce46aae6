"""
bug: minGPT's Block: pre-norm and right about the residuals, but its MLP applies the tanh approximation of GELU (NewGELU) between the two layers instead of ReLU
functions: [DecoderBlock]
questions: [decoder_block]
causes: [cause_tb_block_gelu, cause_tb_run_parts]
source: karpathy/minGPT, mingpt/model.py (NewGELU: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))); Block.forward: x = x + attn(ln_1(x)); x = x + mlpf(ln_2(x)) with mlpf = c_proj(act(c_fc(x)))), https://github.com/karpathy/minGPT/blob/master/mingpt/model.py
idiom: the MLP written out in the block as a lambda over the feed-forward's layers, with the tanh GELU formula typed by hand
"""

import math

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
    def _new_gelu(v):
        return 0.5 * v * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * torch.pow(v, 3.0))))

    def forward(self, x, pad_mask=None):
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        mlpf = lambda v: self.ffn.linear2(self._new_gelu(self.ffn.linear1(v)))  # noqa: E731
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + mlpf(self.ln2(x))
        return x, weights

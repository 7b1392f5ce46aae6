"""
bug: the padding mask's polarity inverted: pad_mask == 0 (True at the padding, what masked_fill(mask, -inf) and HF's (1.0 - attention_mask) take) combined with a causal mask whose True means attend, so the real tokens are hidden and the padding is seen
functions: [DecoderBlock]
questions: [decoder_block]
causes: [cause_tb_pad_mask_inverted]
source: huggingface/transformers, GPT-2 (GPT2Model.forward: attention_mask = (1.0 - attention_mask) * torch.finfo(dtype).min, the padding marked where the mask is 0), https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt2/modeling_gpt2.py
idiom: mask = causal & (pad_mask == 0)[:, None, None, :]
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
            mask = mask & (pad_mask == 0)[:, None, None, :]  # the padding positions
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights

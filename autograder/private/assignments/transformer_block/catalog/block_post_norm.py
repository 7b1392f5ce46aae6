"""
bug: post-norm: each layer norm is applied to the residual sum, ln(x + sublayer(x)), as in the paper and nn.TransformerEncoderLayer's default (norm_first=False), instead of pre-norm x + sublayer(ln(x))
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_tb_post_norm, cause_tb_run_parts]
example: true
source: pytorch, torch/nn/modules/transformer.py (TransformerEncoderLayer.forward without norm_first: x = norm1(x + sa_block(x)); x = norm2(x + ff_block(x))), https://github.com/pytorch/pytorch/blob/main/torch/nn/modules/transformer.py
idiom: x = self.ln1(x + attended); x = self.ln2(x + self.ffn(x))
"""

from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        attended, weights = self.attn(x, x, x, mask)
        x = self.ln1(x + attended)
        x = self.ln2(x + self.ffn(x))
        return x, weights

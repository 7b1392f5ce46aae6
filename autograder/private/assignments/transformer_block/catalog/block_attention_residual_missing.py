"""
bug: the residual around the attention is missing: x = attn(ln1(x)) replaces x instead of being added to it
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_tb_no_attention_residual, cause_tb_run_parts]
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
        h = self.ln1(x)
        x, weights = self.attn(h, h, h, mask)
        x = x + self.ffn(self.ln2(x))
        return x, weights

"""
bug: the causal mask is left out: only the padding mask (when given) reaches the attention, so every position sees the future
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_tb_no_causal_mask, cause_tb_run_parts, cause_tb_run_reads_ahead]
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
        mask = None if pad_mask is None else pad_mask[:, None, None, :]
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights

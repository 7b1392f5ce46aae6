"""
bug: nanoGPT's CausalSelfAttention keeps its causal mask as a persistent buffer (register_buffer("bias", torch.tril(...))): the block computes what the contract asks, but its state_dict holds an extra key, bias, that the grader's state (and the training run's load_state_dict) does not have; a cached table must be registered with persistent=False
functions: [DecoderBlock]
questions: [decoder_block, training_run]
causes: [cause_lab_persistent_buffer, cause_tb_parameter_names]
source: karpathy/nanoGPT, model.py (CausalSelfAttention.__init__: self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size)).view(1, 1, config.block_size, config.block_size)); forward: att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)); mask = self.bias[:, :, :T, :T] != 0
"""

import torch
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, block_size=256):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        # causal mask to ensure that attention is only applied to the left in the input sequence
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x, pad_mask=None):
        B, T, C = x.size()
        mask = self.bias[:, :, :T, :T] != 0
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        h = self.ln1(x)
        attended, weights = self.attn(h, h, h, mask)
        x = x + attended
        x = x + self.ffn(self.ln2(x))
        return x, weights

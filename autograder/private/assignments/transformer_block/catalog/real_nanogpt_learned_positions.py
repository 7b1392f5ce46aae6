"""
bug: nanoGPT's GPT: a learned table of positions (wpe, an nn.Embedding of block_size rows) added to the token embeddings instead of the sinusoidal positional_encoding; the grader's parameters hold no such table
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_learned_positions, cause_tb_parameter_names]
source: karpathy/nanoGPT, model.py (GPT.__init__: wpe = nn.Embedding(config.block_size, config.n_embd); forward: pos = torch.arange(0, t); x = drop(tok_emb + pos_emb)), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: self.wpe = nn.Embedding(block_size, d_model); pos = torch.arange(0, T, device=tokens.device); x = self.embed(tokens) + self.wpe(pos)
"""

import torch
from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, block_size=256):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, pad_mask=None):
        pos = torch.arange(0, tokens.shape[1], dtype=torch.long, device=tokens.device)
        x = self.embed(tokens) + self.wpe(pos)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))

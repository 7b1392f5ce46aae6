"""
bug: the Annotated Transformer's Embeddings: the token embeddings are multiplied by sqrt(d_model) before the positions are added; this contract adds the positions to embed(tokens) as it is
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_embedding_scaled, cause_tb_run_parts, cause_tb_run_positions, cause_run_own_forward]
source: harvardnlp, The Annotated Transformer (Embeddings.forward: self.lut(x) * math.sqrt(self.d_model)), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: self.embed(tokens) * math.sqrt(d_model)
"""

import math

from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, pad_mask=None):
        x = self.embed(tokens) * math.sqrt(self.d_model)
        x = x + positional_encoding(tokens.shape[1], self.d_model, device=x.device, dtype=x.dtype)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))

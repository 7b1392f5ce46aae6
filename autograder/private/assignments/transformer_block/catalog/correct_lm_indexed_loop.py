"""
correct: the model written with an index loop over its blocks (for i in range(len(self.blocks))), the embedding looked up with F.embedding on its weight, and the positions added in place of a broadcast
functions: [TransformerLM]
questions: []
idiom: x = F.embedding(tokens, self.embed.weight); for i in range(len(self.blocks)): x = self.blocks[i](x, pad_mask)[0]
"""

import torch.nn.functional as F
from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, pad_mask=None):
        B, T = tokens.shape
        x = F.embedding(tokens, self.embed.weight)  # (B, T, D)
        pe = positional_encoding(T, x.shape[-1], device=x.device, dtype=x.dtype)  # (T, D)
        x = x + pe.unsqueeze(0).expand(B, -1, -1)  # (B, T, D)
        for i in range(len(self.blocks)):
            x = self.blocks[i](x, pad_mask)[0]  # (B, T, D)
        return self.head(self.ln_f(x))  # (B, T, V)

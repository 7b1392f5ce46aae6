"""
bug: the Annotated Transformer's PositionalEncoding keeps its sinusoidal table as a persistent buffer (register_buffer("pe", pe)): its state_dict holds an extra key, pe, that the grader's state (and the training run's load_state_dict) does not have, where a cached table must be registered with persistent=False; the table, built in float32 and moved with the model, also carries float32 rounding into a float64 model
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_lab_persistent_buffer, cause_tb_parameter_names, cause_float32_detour]
source: harvardnlp, The Annotated Transformer (PositionalEncoding.__init__: pe = torch.zeros(max_len, d_model); pe[:, 0::2] = torch.sin(position * div_term); pe[:, 1::2] = torch.cos(position * div_term); pe = pe.unsqueeze(0); self.register_buffer("pe", pe); forward: x = x + self.pe[:, : x.size(1)].requires_grad_(False)), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: self.register_buffer("pe", pe) of a (1, max_len, d_model) table built in __init__; x = x + self.pe[:, : x.size(1)]
"""

import math

import torch
from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, max_len=5000):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        # Compute the positional encodings once in log space.
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, tokens, pad_mask=None):
        x = self.embed(tokens)
        x = x + self.pe[:, : x.size(1)].requires_grad_(False)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))

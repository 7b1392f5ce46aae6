"""
correct: the Annotated Transformer's PositionalEncoding table: div_term from exp(arange(0, D, 2) * -(log 10000 / D)), sines written into the even columns and cosines into the odd ones by slice assignment
functions: [positional_encoding]
questions: [positional_encoding]
source: harvardnlp, The Annotated Transformer (PositionalEncoding.__init__: pe[:, 0::2] = sin(position * div_term); pe[:, 1::2] = cos(position * div_term)), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: torch.zeros(max_len, d_model) filled by pe[:, 0::2] = ... and pe[:, 1::2] = ...
"""

import math

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    pe = torch.zeros(seq_len, d_model, device=device, dtype=work)
    position = torch.arange(0, seq_len, device=device, dtype=work).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, device=device, dtype=work) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.to(dtype)

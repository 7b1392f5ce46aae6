"""
bug: d2l's positional encoding with the exponent's denominator halved, 10000^(2i / (D / 2)): the layout and the angles' form are right, the frequencies fall twice as fast
functions: [positional_encoding]
questions: [positional_encoding, training_run]
causes: [cause_tb_pe_frequencies, cause_tb_run_parts, cause_tb_run_positions]
source: d2l-ai, Dive into Deep Learning 11.6 (PositionalEncoding.__init__: X = torch.arange(max_len).reshape(-1, 1) / torch.pow(10000, torch.arange(0, num_hiddens, 2) / num_hiddens); self.P[:, :, 0::2] = torch.sin(X); self.P[:, :, 1::2] = torch.cos(X)), https://d2l.ai/chapter_attention-mechanisms-and-transformers/self-attention-and-positional-encoding.html
idiom: X = positions / torch.pow(10000, torch.arange(0, D, 2) / D); P[:, 0::2] = torch.sin(X); P[:, 1::2] = torch.cos(X)
"""

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    P = torch.zeros(seq_len, d_model, device=device, dtype=work)
    X = torch.arange(seq_len, device=device, dtype=work).reshape(-1, 1) / torch.pow(
        10000, torch.arange(0, d_model, 2, device=device, dtype=work) / (d_model // 2)
    )
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X)
    return P.to(dtype)

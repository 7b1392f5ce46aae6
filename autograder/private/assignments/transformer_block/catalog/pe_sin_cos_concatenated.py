"""
bug: the sines fill the first half of the features and the cosines the second half (torch.cat) instead of alternating sin, cos in each pair
functions: [positional_encoding]
questions: [positional_encoding, training_run]
causes: [cause_tb_pe_concat, cause_tb_run_parts, cause_tb_run_positions]
example: true
idiom: torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1), common in tutorials and in rotary-embedding code
"""

import math

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    pos = torch.arange(seq_len, device=device, dtype=work)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2, device=device, dtype=work) * (-math.log(10000.0) / d_model))
    angles = pos * freq
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)[:, :d_model].to(dtype)

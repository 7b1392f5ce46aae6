"""
bug: the angles computed in the dtype asked (float16 holds 256 .. 512 only 0.25 apart)
functions: [positional_encoding]
questions: [positional_encoding]
causes: [cause_tb_pe_angles_in_dtype]
"""
import math

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    t = torch.arange(seq_len, device=device, dtype=dtype)
    two_i = torch.arange(0, d_model, 2, device=device, dtype=dtype)
    inv_freq = torch.exp(-math.log(10000.0) * two_i / d_model)
    angles = t[:, None] * inv_freq[None, :]
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)
    return pe.flatten(1)[:, :d_model]

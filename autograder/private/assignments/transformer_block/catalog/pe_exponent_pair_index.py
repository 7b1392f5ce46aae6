"""
bug: the exponent is i / D for pair i, the factor 2 of 2i / D left out (the frequencies fall half as fast)
functions: [positional_encoding]
questions: [positional_encoding, training_run]
causes: [cause_tb_pe_pair_exponent, cause_tb_run_parts, cause_tb_run_positions]
"""

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    pos = torch.arange(seq_len, device=device, dtype=work)[:, None]
    i = torch.arange(d_model // 2, device=device, dtype=work)
    angles = pos / 10000.0 ** (i / d_model)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1).to(dtype)

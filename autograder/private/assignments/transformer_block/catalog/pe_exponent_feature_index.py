"""
bug: the exponent uses the feature index j / D instead of 2i / D for the pair, so the cosine of a pair gets another frequency than its sine
functions: [positional_encoding]
questions: [positional_encoding, training_run]
causes: [cause_tb_pe_feature_exponent, cause_tb_run_parts, cause_tb_run_positions]
idiom: a loop-free table where every feature j gets 1 / 10000 ** (j / d_model), then sin on the even columns and cos on the odd ones
"""

import torch


def positional_encoding(seq_len, d_model, device=None, dtype=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32
    pos = torch.arange(seq_len, device=device, dtype=work)[:, None]
    j = torch.arange(d_model, device=device, dtype=work)
    angles = pos / torch.pow(torch.tensor(10000.0, device=device, dtype=work), j / d_model)
    pe = torch.empty(seq_len, d_model, device=device, dtype=work)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe.to(dtype)

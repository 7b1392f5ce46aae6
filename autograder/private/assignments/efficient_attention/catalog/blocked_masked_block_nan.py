"""
bug: the running maximum is subtracted as it is: after a block where every key of a query is masked it is -inf, and exp(-inf - (-inf)) makes the query's output NaN (padding before the keys, a fully masked row)
functions: [blocked_attention]
questions: [blocked_attention]
causes: [cause_ea_masked_block_nan]
"""
import math

import torch


def blocked_attention(query, key, value, mask=None, causal=False, block_size=32):
    T_q, d_k = query.shape[-2:]
    T_k = key.shape[-2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q = query.to(work) / math.sqrt(d_k)
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = torch.full((*lead, T_q, 1), float("-inf"), dtype=work)
    l = torch.zeros((*lead, T_q, 1), dtype=work)
    o = torch.zeros((*lead, T_q, value.shape[-1]), dtype=work)
    rows = torch.arange(T_q)[:, None] + (T_k - T_q)
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        s = q @ key[..., j0:j1, :].to(work).transpose(-2, -1)
        allowed = None if mask is None else mask[..., j0:j1]
        if causal:
            fut = torch.arange(j0, j1)[None, :] <= rows
            allowed = fut if allowed is None else allowed & fut
        if allowed is not None:
            s = s.masked_fill(~allowed, float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        r = torch.exp(m - m_new)
        l = l * r + p.sum(-1, keepdim=True)
        o = o * r + p @ value[..., j0:j1, :].to(work)
        m = m_new
    return (o / l).to(query.dtype)

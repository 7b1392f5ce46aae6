"""
bug: the online softmax rescales the running output by exp(m_old - m_new) when the maximum grows, but not the running sum (the rescale applied to the output only)
functions: [blocked_attention]
questions: [blocked_attention]
causes: [cause_ea_sum_not_rescaled]
example: true
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
        safe = m_new.masked_fill(m_new == float("-inf"), 0.0)
        p = torch.exp(s - safe)
        r = torch.exp(m - safe)
        l = l + p.sum(-1, keepdim=True)
        o = o * r + p @ value[..., j0:j1, :].to(work)
        m = m_new
    return (o / l.masked_fill(l == 0, 1.0)).to(query.dtype)

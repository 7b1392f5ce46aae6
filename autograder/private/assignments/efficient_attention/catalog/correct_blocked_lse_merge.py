"""
correct: each block's softmax output and log-sum-exp computed on their own, then merged with the running ones by their log-sum-exps (FlashAttention-2's split-KV combine, xformers' merge_attentions)
functions: [blocked_attention]
questions: []
"""
import math

import torch


def blocked_attention(query, key, value, mask=None, causal=False, block_size=32):
    T_q, d_k = query.shape[-2:]
    T_k = key.shape[-2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q = query.to(work) / math.sqrt(d_k)
    out, lse = None, None
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        s = q @ key[..., j0:j1, :].to(work).transpose(-2, -1)
        if mask is not None:
            s = s.masked_fill(~mask[..., j0:j1], float("-inf"))
        if causal:
            i = torch.arange(T_q)[:, None] + (T_k - T_q)
            s = s.masked_fill(torch.arange(j0, j1)[None, :] > i, float("-inf"))
        b_lse = torch.logsumexp(s, dim=-1, keepdim=True)  # -inf where the block has no allowed key
        finite = torch.where(torch.isfinite(b_lse), b_lse, torch.zeros_like(b_lse))
        b_out = torch.exp(s - finite) @ value[..., j0:j1, :].to(work)
        if out is None:
            out, lse = b_out, b_lse
            continue
        new = torch.logaddexp(lse, b_lse)
        safe = torch.where(torch.isfinite(new), new, torch.zeros_like(new))
        out = out * torch.exp(lse - safe) + b_out * torch.exp(finite - safe) * torch.isfinite(b_lse)
        lse = new
    return out.to(query.dtype)

"""What the efficient_attention suites share: the blocked attention written with one
mistake at a time (the likely causes are recomputed from the inputs, never guessed from
the output alone), the module case of GroupedQueryAttention, and the decoding run.

The yardstick is always the reference (`solutions/efficient_attention.py`, in float64
on the CPU), never the student's code.
"""

import math

import torch

from autograder.judge.failure import Msg
from autograder.private.suites import compare

NEG = float("-inf")


# -- blocked attention with one mistake --------------------------------------------------
def blocked(q, k, v, mask=None, causal=False, block_size=32, how="ok"):
    """The online softmax in float64 with one mistake (`how`): "no_rescale" (neither the
    running sum nor the output rescaled when the maximum grows), "sum_not_rescaled" (the
    output rescaled, the sum not), "output_not_rescaled" (the sum rescaled, the output not),
    "no_guard" (a maximum of -inf subtracted as it is: NaN after a block with no allowed
    key), "not_scaled", "causal_top_left" (query i sees keys j <= i), "mask_ignored"."""
    q, k, v = (x.detach().double().cpu() for x in (q, k, v))
    T_q, d_k = q.shape[-2:]
    T_k = k.shape[-2]
    q = q if how == "not_scaled" else q / math.sqrt(d_k)
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    m = torch.full((*lead, T_q, 1), NEG, dtype=torch.float64)
    s_ = torch.zeros((*lead, T_q, 1), dtype=torch.float64)
    o = torch.zeros((*lead, T_q, v.shape[-1]), dtype=torch.float64)
    shift = 0 if how == "causal_top_left" else T_k - T_q
    rows = torch.arange(T_q)[:, None] + shift
    mask = None if how == "mask_ignored" or mask is None else mask.cpu()
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        s = q @ k[..., j0:j1, :].transpose(-2, -1)
        allowed = None if mask is None else mask[..., j0:j1]
        if causal:
            fut = torch.arange(j0, j1)[None, :] <= rows
            allowed = fut if allowed is None else allowed & fut
        if allowed is not None:
            s = s.masked_fill(~allowed, NEG)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        safe = m_new if how == "no_guard" else m_new.masked_fill(m_new == NEG, 0.0)
        p = torch.exp(s - safe)
        r = torch.exp(m - safe)
        s_ = (s_ if how in ("no_rescale", "sum_not_rescaled") else s_ * r) + p.sum(-1, keepdim=True)
        o = (o if how in ("no_rescale", "output_not_rescaled") else o * r) + p @ v[..., j0:j1, :]
        m = m_new
    if how == "no_guard":
        return o / s_
    return o / s_.masked_fill(s_ == 0, 1.0)


BLOCKED_MISTAKES = {
    "no_rescale": "cause_ea_not_rescaled",
    "sum_not_rescaled": "cause_ea_sum_not_rescaled",
    "output_not_rescaled": "cause_ea_output_not_rescaled",
    "not_scaled": "cause_ea_not_scaled",
    "causal_top_left": "cause_ea_causal_top_left",
    "mask_ignored": "cause_ea_mask_ignored",
}


def same_nans(got, want, cfg):
    """NaN where `want` has NaN and nowhere else, and close elsewhere."""
    g, w = got.detach().double().cpu(), want.detach().double().cpu()
    if g.shape != w.shape or not torch.equal(torch.isnan(g), torch.isnan(w)) or not torch.isnan(w).any():
        return False
    keep = ~torch.isnan(w)
    return compare.matches(g[keep], w[keep], cfg)


def blocked_hint(args, kwargs, cfg):
    """The likely cause of a blocked_attention output: the one mistake whose recomputation
    gives it (NaN exactly where a maximum of -inf minus -inf puts it)."""

    def h(got, expected):
        q, k, v = args
        mask, causal, bs = kwargs.get("mask"), kwargs.get("causal", False), kwargs.get("block_size", 32)
        if torch.isnan(got.detach()).any():
            nan = blocked(q, k, v, mask, causal, bs, "no_guard")
            return Msg("cause_ea_masked_block_nan") if same_nans(got, nan, cfg) else None
        for how, key in BLOCKED_MISTAKES.items():
            if how == "causal_top_left" and not (causal and q.shape[-2] != k.shape[-2]):
                continue
            if how == "mask_ignored" and mask is None:
                continue
            if compare.matches(got, blocked(q, k, v, mask, causal, bs, how), cfg):
                return Msg(key)
        return None

    return h


# -- parameters ---------------------------------------------------------------------------


def loaded(module, state, dtype=torch.float64):
    """The reference `module` in float64 with `state` loaded (rounded to `dtype` first:
    what the student's module holds)."""
    m = module.double()
    m.load_state_dict({k: v.to(dtype).double() for k, v in state.items()})
    return m


def first_match(got, alternatives, cfg):
    """The cause of the first (cause, tensor) alternative that `got` equals, else None."""
    for cause, want in alternatives:
        if compare.matches(got, want, cfg):
            return cause
    return None

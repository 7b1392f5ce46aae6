"""Quiet comparisons with the reference, no words: whether outputs are within the
judge's tolerance (`close_enough`, `differs_beyond`) and whether an output equals an
alternative formula's (`matches`, for likely causes).
"""

import torch


def matches(got, want, cfg):
    """For likely causes: does `got` equal an alternative formula's `want` as
    closely as the judge's `cfg` asks of the right answer in got's dtype?"""
    atol, rtol = cfg.tolerance(got.dtype)
    g = got.detach().double().cpu()
    w = want.detach().double().cpu()
    return g.shape == w.shape and not torch.isnan(g).any() and torch.allclose(g, w, atol=atol, rtol=rtol)


def differs_beyond(cfg, dtype):
    """Whether outputs differ from the reference's beyond `dtype`'s tolerance (their shapes the same)."""
    atol, rtol = cfg.tolerance(dtype)

    def differs(got, expected):
        found = False
        for n, e in expected.items():
            g, e = got[n].detach().double().cpu(), e.detach().double().cpu()
            if g.shape != e.shape:
                return False  # another failure than a wrong value
            found = found or not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
        return found

    return differs


def close_enough(got, expected, cfg):
    """Whether every output is within grading.yml's tolerance of the reference (no message)."""
    for n, exp in expected.items():
        if got[n].is_meta or exp.is_meta:  # no values (the meta device): close only as two meta tensors of one shape
            if not (got[n].is_meta and exp.is_meta and got[n].shape == exp.shape):
                return False
            continue
        g = got[n].detach().double().cpu()
        e = exp.detach().double().cpu()
        atol, rtol = cfg.tolerance(got[n].dtype)
        if g.shape != e.shape or not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True):
            return False
    return True

"""
bug: masked keys replaced by the finite value -1e6 (d2l's sequence_mask) with no guard: a fully masked row gets uniform weights, not zeros
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_uniform, cause_finite_fill_below]
source: Dive into Deep Learning, chapter "Attention Scoring Functions" (masked_softmax, sequence_mask), https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html
idiom: flatten the scores to rows of the key axis, overwrite the disallowed entries with -1e6 by boolean indexing, reshape back, plain softmax (here on a copy, so the caller's scores are untouched)
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    moved = scores.movedim(dim, -1)
    allowed = mask.expand_as(scores).movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]).clone()
    rows[~allowed.reshape(rows.shape)] = -1e6
    out = torch.softmax(rows.reshape(moved.shape), dim=-1)
    return out.movedim(-1, dim)

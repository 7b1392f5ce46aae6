"""
bug: d2l's sequence_mask writes -1e6 into X.reshape(...), a view of the caller's scores, so the input is changed in place (and a fully masked row gets uniform weights)
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_uniform, cause_finite_fill_below, cause_in_place]
source: Dive into Deep Learning, chapter "Attention Scoring Functions" (masked_softmax calling sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)), https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html
idiom: reshape the scores to 2-D rows (a view for contiguous input) and assign the fill value through a boolean index, exactly as sequence_mask does, then softmax the reshaped-back tensor
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return torch.softmax(scores, dim=dim)
    shape = scores.shape
    keep = mask.expand(shape).reshape(-1, shape[-1])
    flat = scores.reshape(-1, shape[-1])
    flat[~keep] = -1e6
    return torch.softmax(flat.reshape(shape), dim=dim)

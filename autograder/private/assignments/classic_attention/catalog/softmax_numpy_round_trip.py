"""
bug: the softmax computed in numpy and converted back (no gradient, CPU only)
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_numpy_round_trip, cause_detached, cause_values_in_python]
"""
import numpy as np
import torch


def masked_softmax(scores, mask=None, dim=-1):
    s = scores.detach().cpu().numpy()
    if mask is not None:
        s = np.where(np.broadcast_to(mask.cpu().numpy(), s.shape), s, -np.inf)
    m = s.max(axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=dim, keepdims=True)
    out = e / np.where(total > 0, total, 1.0)
    return torch.from_numpy(out).to(scores.device)

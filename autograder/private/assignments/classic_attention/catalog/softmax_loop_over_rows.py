"""
bug: a Python loop over the rows of a 2-D score matrix (correct values, not vectorised)
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_python_loop, cause_values_in_python]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    moved = scores.movedim(dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    rows = []
    for row in flat:
        if torch.isinf(row).all():
            rows.append(torch.zeros_like(row))
        else:
            e = torch.exp(row - row.max())
            rows.append(e / e.sum())
    return torch.stack(rows).reshape(moved.shape).movedim(-1, dim)

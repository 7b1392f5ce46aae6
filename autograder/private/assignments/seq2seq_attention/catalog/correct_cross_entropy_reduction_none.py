"""
correct: F.cross_entropy with reduction="none" over the flattened positions, masked and divided by the clamped count
functions: [masked_loss]
questions: []
"""
import torch.nn.functional as F


def masked_loss(logits, targets, mask):
    V = logits.shape[-1]
    ce = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction="none")  # (B*T,)
    m = mask.reshape(-1).to(ce.dtype)
    return (ce * m).sum() / m.sum().clamp(min=1.0)

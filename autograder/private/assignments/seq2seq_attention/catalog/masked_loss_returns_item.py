"""
bug: the loss returned as a Python number (loss.item()): right value, but nothing can be backpropagated through it
functions: [masked_loss]
questions: [masked_loss]
causes: [cause_python_number]
"""
import torch


def masked_loss(logits, targets, mask):
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    m = mask.to(picked.dtype)
    loss = -(picked * m).sum() / m.sum().clamp(min=1)
    return loss.item()

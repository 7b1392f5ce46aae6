"""
bug: the masked sum divided by the batch size, not by the number of real positions
functions: [masked_loss]
questions: [masked_loss]
causes: [cause_lab_loss_per_batch]
"""
import torch


def masked_loss(logits, targets, mask):
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return -(picked * mask).sum() / logits.shape[0]

"""
bug: padded positions weighted 0 but each sequence's sum divided by T (every position), not by the number of real positions
functions: [masked_loss]
questions: [masked_loss]
causes: [cause_lab_loss_divided_by_all]
source: Dive into Deep Learning, class MaskedSoftmaxCELoss, https://d2l.ai/chapter_recurrent-modern/seq2seq.html
idiom: weights = sequence_mask(torch.ones_like(label), valid_len); unweighted_loss = super().forward(pred.permute(0, 2, 1), label) with reduction='none'; weighted_loss = (unweighted_loss * weights).mean(dim=1); here averaged over the batch to a scalar
"""
import torch.nn.functional as F


def masked_loss(logits, targets, mask):
    weights = mask.to(logits.dtype)
    unweighted_loss = F.cross_entropy(logits.permute(0, 2, 1), targets, reduction="none")  # (B, T)
    weighted_loss = (unweighted_loss * weights).mean(dim=1)
    return weighted_loss.mean()

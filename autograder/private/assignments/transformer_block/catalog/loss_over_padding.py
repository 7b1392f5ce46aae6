"""
bug: the mask is ignored: the loss is the mean over every shifted target, padding included
functions: [next_token_loss]
questions: [next_token_loss]
causes: [cause_tb_loss_over_padding, cause_tb_run_parts]
idiom: F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1)) with its default mean
"""

from torch.nn import functional as F


def next_token_loss(logits, tokens, mask=None):
    V = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1))

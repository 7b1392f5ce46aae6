"""
bug: no shift: the logits at t are scored against tokens[:, t] (the token the model was given), not tokens[:, t + 1]
functions: [next_token_loss]
questions: [next_token_loss, training_run]
causes: [cause_tb_loss_no_shift, cause_tb_run_parts]
"""

import torch


def next_token_loss(logits, tokens, mask=None):
    if mask is None:
        mask = torch.ones(tokens.shape, dtype=torch.bool, device=tokens.device)
    return masked_loss(logits, tokens, mask)

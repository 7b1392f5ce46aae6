"""
bug: the gradients are never zeroed, so each step adds this batch's gradients to every earlier one's
functions: [train_step]
questions: [train_step, training_run]
causes: [cause_lab_no_zero_grad, cause_lab_run_parts]
example: true
"""
import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    states, state = encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    logits = []
    for t in range(tgt.shape[1] - 1):
        out, state, _ = decoder(tgt[:, t], state, states, mask)
        logits.append(out)
    loss = masked_loss(torch.stack(logits, 1), tgt[:, 1:], length_mask(tgt_lengths - 1, tgt.shape[1] - 1))
    loss.backward()
    optimizer.step()
    return loss.item()

"""
bug: the loss mask is every target position: the steps after EOS (PAD targets) are trained too
functions: [train_step]
questions: [train_step]
causes: [cause_lab_mask_all]
"""
import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    optimizer.zero_grad()
    states, state = encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    logits = []
    for t in range(tgt.shape[1] - 1):
        out, state, _ = decoder(tgt[:, t], state, states, mask)
        logits.append(out)
    targets = tgt[:, 1:]
    loss = masked_loss(torch.stack(logits, 1), targets, torch.ones_like(targets, dtype=torch.bool))
    loss.backward()
    optimizer.step()
    return loss.item()

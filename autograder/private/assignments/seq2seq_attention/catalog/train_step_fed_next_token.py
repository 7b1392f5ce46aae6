"""
bug: targets not shifted against the inputs: the decoder is fed tgt[:, 1:] and trained to predict tgt[:, 1:], the very token it is fed
functions: [train_step]
questions: [train_step]
causes: [cause_lab_no_shift_next, cause_lab_run_parts]
"""
import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    optimizer.zero_grad()
    states, state = encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    targets = tgt[:, 1:]
    logits = []
    for t in range(targets.shape[1]):
        out, state, _ = decoder(targets[:, t], state, states, mask)
        logits.append(out)
    loss = masked_loss(torch.stack(logits, 1), targets, length_mask(tgt_lengths - 1, targets.shape[1]))
    loss.backward()
    optimizer.step()
    return loss.item()

"""
bug: the decoder starts from a zero state, not from the encoder's final state (nothing of the source reaches a baseline decoder)
functions: [train_step]
questions: [train_step, training_run]
causes: [cause_lab_zero_start, cause_lab_run_parts]
"""
import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    optimizer.zero_grad()
    states, final = encoder(src, src_lengths)
    state = torch.zeros_like(final)
    mask = length_mask(src_lengths, src.shape[1])
    logits = []
    for t in range(tgt.shape[1] - 1):
        out, state, _ = decoder(tgt[:, t], state, states, mask)
        logits.append(out)
    loss = masked_loss(torch.stack(logits, 1), tgt[:, 1:], length_mask(tgt_lengths - 1, tgt.shape[1] - 1))
    loss.backward()
    optimizer.step()
    return loss.item()

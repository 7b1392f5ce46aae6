"""
bug: teacher forcing without the shift: the decoder is trained to predict the very token it is fed (targets tgt[:, :-1])
functions: [train_step]
questions: [train_step, training_run]
causes: [cause_lab_no_shift, cause_lab_run_parts]
"""
import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    optimizer.zero_grad()
    states, state = encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    inputs = tgt[:, :-1]
    logits = []
    for t in range(inputs.shape[1]):
        out, state, _ = decoder(inputs[:, t], state, states, mask)
        logits.append(out)
    loss = masked_loss(torch.stack(logits, 1), inputs, length_mask(tgt_lengths - 1, inputs.shape[1]))
    loss.backward()
    optimizer.step()
    return loss.item()

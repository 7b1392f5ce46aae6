"""
bug: a teacher-forcing ratio: each step after the first is fed the true token only when random.random() < 0.5, else the decoder's own argmax, so the loss depends on the decoder's predictions (and on chance)
functions: [train_step]
questions: [train_step]
causes: [cause_lab_teacher_forcing_ratio]
source: bentrevett/pytorch-seq2seq, 3 - Neural Machine Translation by Jointly Learning to Align and Translate, class Seq2Seq.forward, https://github.com/bentrevett/pytorch-seq2seq
idiom: teacher_force = random.random() < teacher_forcing_ratio; top1 = output.argmax(1); input = trg[t] if teacher_force else top1
"""
import random

import torch


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths, teacher_forcing_ratio=0.5):
    optimizer.zero_grad()
    states, state = encoder(src, src_lengths)
    mask = length_mask(src_lengths, src.shape[1])
    targets = tgt[:, 1:]
    token = tgt[:, 0]
    logits = []
    for t in range(targets.shape[1]):
        out, state, _ = decoder(token, state, states, mask)
        logits.append(out)
        teacher_force = random.random() < teacher_forcing_ratio
        top1 = out.argmax(1)
        token = tgt[:, t + 1] if teacher_force else top1
    loss = masked_loss(torch.stack(logits, 1), targets, length_mask(tgt_lengths - 1, targets.shape[1]))
    loss.backward()
    optimizer.step()
    return loss.item()

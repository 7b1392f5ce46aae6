"""
bug: the training step does nothing and returns 0.0: no forward pass, no loss, no update (a stub that only has the right return type)
functions: [train_step]
questions: [train_step, training_run]
causes: [cause_lab_run_parts]
"""


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    return 0.0

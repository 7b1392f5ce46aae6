"""
bug: no ValueError when d_s != d_h (the matmul raises a RuntimeError instead)
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_sizes_checked_late]
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    scores = torch.bmm(encoder_states, decoder_state.unsqueeze(2)).squeeze(2)
    weights = masked_softmax(scores, mask, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), encoder_states).squeeze(1)
    return context, weights

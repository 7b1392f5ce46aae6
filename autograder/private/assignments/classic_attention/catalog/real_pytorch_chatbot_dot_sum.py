"""
bug: the chatbot tutorial's dot_score (sum of an elementwise product) has no size check: d_s != d_h raises a broadcasting RuntimeError, not ValueError
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_sizes_checked_late]
source: PyTorch tutorials, "Chatbot Tutorial" (class Attn, dot_score), https://pytorch.org/tutorials/beginner/chatbot_tutorial.html
idiom: score = torch.sum(hidden * encoder_output, dim=2) with the hidden state broadcast over the time axis, then a softmax over time (here the kit's masked_softmax) and a bmm for the context
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    hidden = decoder_state.unsqueeze(1)  # (B, 1, d_s)
    energies = torch.sum(hidden * encoder_states, dim=2)  # (B, T)
    weights = masked_softmax(energies, mask, dim=1)
    context = weights.unsqueeze(1).bmm(encoder_states).squeeze(1)
    return context, weights

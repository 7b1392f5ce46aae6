"""
bug: sigmoid instead of tanh in the additive score
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_additive_sigmoid]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    energy = torch.sigmoid((decoder_state @ W_a.T).unsqueeze(1) + encoder_states @ U_a.T)
    scores = (energy * v_a).sum(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(-1) * encoder_states).sum(1)
    return context, weights

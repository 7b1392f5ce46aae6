"""
bug: the context accumulated into torch.zeros(B, d_h) without dtype/device: float32 on the CPU
functions: [general_attention]
questions: [general_attention]
causes: [cause_created_float32, cause_no_device_short]
"""
import torch


def general_attention(decoder_state, encoder_states, W, mask=None):
    B, T, d_h = encoder_states.shape
    scores = ((encoder_states @ W.T) * decoder_state.unsqueeze(1)).sum(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = torch.zeros(B, d_h)
    context += (weights.unsqueeze(-1) * encoder_states).sum(1)
    return context, weights

"""
bug: the PyTorch translation tutorial's BahdanauAttention has no mask: softmax over every encoder step, so padded positions get weight
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_mask_ignored]
source: PyTorch tutorials, "NLP From Scratch: Translation with a Sequence to Sequence Network and Attention" (class BahdanauAttention), https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html
idiom: scores = Va(tanh(Wa(query) + Ua(keys))) with the query kept as a (B, 1, .) step, squeeze(2).unsqueeze(1) to (B, 1, T), F.softmax over the last axis, context = torch.bmm(weights, keys)
"""
import torch
import torch.nn.functional as F


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state.unsqueeze(1)  # (B, 1, d_s)
    energy = torch.tanh(F.linear(query, W_a) + F.linear(encoder_states, U_a))  # (B, T, d_attn)
    scores = F.linear(energy, v_a.unsqueeze(0))  # (B, T, 1)
    scores = scores.squeeze(2).unsqueeze(1)  # (B, 1, T)
    weights = F.softmax(scores, dim=-1)
    context = torch.bmm(weights, encoder_states)  # (B, 1, d_h)
    return context.squeeze(1), weights.squeeze(1)

"""
correct: d2l's AdditiveAttention: projected query and keys broadcast with unsqueeze, tanh, score by the v vector, masked_softmax, context by torch.bmm
functions: [additive_attention]
questions: []
source: Dive into Deep Learning, class AdditiveAttention, https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html
idiom: features = W_q(q).unsqueeze(2) + W_k(k).unsqueeze(1) with one query step, tanh, w_v(...).squeeze(-1), weights through masked_softmax, torch.bmm(weights, values)
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    queries = (decoder_state @ W_a.T).unsqueeze(1)  # (B, 1, d_attn): one query step
    keys = encoder_states @ U_a.T  # (B, T, d_attn)
    features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))  # (B, 1, T, d_attn)
    scores = (features @ v_a.unsqueeze(-1)).squeeze(-1)  # (B, 1, T)
    weights = masked_softmax(scores, None if mask is None else mask.unsqueeze(1), dim=-1)
    context = torch.bmm(weights, encoder_states)  # (B, 1, d_h)
    return context.squeeze(1), weights.squeeze(1)

"""
bug: Keras Attention (Luong dot) masking subtracts 1e9 from disallowed scores: a fully masked row gets the plain unmasked softmax and a nonzero context
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_dead_additive_mask]
source: Keras, keras/layers/attention/attention.py (Attention._calculate_scores: matmul(query, key, transpose_b=True)) and base_dense_attention.py (_apply_scores), https://github.com/keras-team/keras/blob/v2.13.1/keras/layers/attention/attention.py
idiom: scores = query @ key^T with the query as a one-step sequence; padding_mask = logical_not(mask); scores -= max_value * padding_mask with max_value 1e9 (65504 in float16); softmax; weights @ values
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    if decoder_state.shape[-1] != encoder_states.shape[-1]:
        raise ValueError("Luong dot attention needs d_s == d_h")
    query = decoder_state.unsqueeze(1)  # (B, 1, d)
    scores = torch.matmul(query, encoder_states.transpose(1, 2))  # (B, 1, T)
    if mask is not None:
        padding_mask = torch.logical_not(mask).unsqueeze(1)
        max_value = 65504.0 if scores.dtype == torch.float16 else 1.0e9
        scores = scores - max_value * padding_mask.to(scores.dtype)
    weights = torch.softmax(scores, dim=-1)
    context = torch.matmul(weights, encoder_states)
    return context.squeeze(1), weights.squeeze(1)

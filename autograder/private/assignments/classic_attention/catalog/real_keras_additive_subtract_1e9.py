"""
bug: Keras-style masking subtracts 1e9 from disallowed scores instead of zeroing them: a fully masked row gets the plain unmasked softmax, not zeros
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_dead_additive_mask]
source: Keras, keras/layers/attention/additive_attention.py and base_dense_attention.py (_calculate_scores, _apply_scores), https://github.com/keras-team/keras/blob/v2.13.1/keras/layers/attention/additive_attention.py
idiom: scores = reduce_sum(scale * tanh(q_reshaped + k_reshaped), axis=-1) with the query broadcast against the keys; masking by scores -= 1e9 * cast(logical_not(mask)) (65504 for float16); softmax; weights @ value
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    q = (decoder_state @ W_a.T)[:, None, :]  # (B, 1, d_attn)
    k = encoder_states @ U_a.T  # (B, T, d_attn)
    scores = torch.sum(v_a * torch.tanh(q + k), dim=-1)  # (B, T)
    if mask is not None:
        big = 65504.0 if scores.dtype == torch.float16 else 1.0e9
        scores = scores - big * torch.logical_not(mask).to(scores.dtype)
    weights = torch.softmax(scores, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

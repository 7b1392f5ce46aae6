"""
correct: the TensorFlow NMT tutorial's BahdanauAttention: query given a time axis, V(tanh(W1 q + W2 values)), weights broadcast over the values and summed over time
functions: [additive_attention]
questions: []
source: TensorFlow tutorials, "Neural machine translation with attention" (class BahdanauAttention, TF 2.x version), https://www.tensorflow.org/text/tutorials/nmt_with_attention
idiom: query_with_time_axis = expand_dims(query, 1); score of shape (B, T, 1); softmax over the time axis (here the kit's masked_softmax); context_vector = reduce_sum(attention_weights * values, axis=1)
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query_with_time_axis = decoder_state[:, None, :]  # (B, 1, d_s)
    hidden = torch.tanh(query_with_time_axis @ W_a.T + encoder_states @ U_a.T)  # (B, T, d_attn)
    score = hidden @ v_a[:, None]  # (B, T, 1)
    weights = masked_softmax(score[..., 0], mask, dim=1)  # (B, T)
    context = (weights[..., None] * encoder_states).sum(dim=1)  # (B, d_h)
    return context, weights

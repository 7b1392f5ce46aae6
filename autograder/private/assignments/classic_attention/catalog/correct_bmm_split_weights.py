"""
correct: bmm with reshapes; general projects the decoder state (s W); concat splits W_a in two blocks
functions: [dot_attention, general_attention, concat_attention]
questions: []
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    B, T, d_h = encoder_states.shape
    if decoder_state.shape[1] != d_h:
        raise ValueError(f"decoder size {decoder_state.shape[1]} != encoder size {d_h}")
    scores = torch.bmm(encoder_states, decoder_state.reshape(B, d_h, 1)).reshape(B, T)
    weights = masked_softmax(scores, mask)
    context = torch.bmm(weights.reshape(B, 1, T), encoder_states).reshape(B, d_h)
    return context, weights


def general_attention(decoder_state, encoder_states, W, mask=None):
    B, T, d_h = encoder_states.shape
    query = decoder_state @ W  # (B, d_h): s . (W h) == (s W) . h
    scores = torch.bmm(encoder_states, query.reshape(B, d_h, 1)).reshape(B, T)
    weights = masked_softmax(scores, mask)
    context = torch.bmm(weights.reshape(B, 1, T), encoder_states).reshape(B, d_h)
    return context, weights


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    d_s = decoder_state.shape[-1]
    W_s, W_h = W_a[:, :d_s], W_a[:, d_s:]  # W_a [s; h] == W_s s + W_h h
    energy = torch.tanh((decoder_state @ W_s.T)[:, None, :] + encoder_states @ W_h.T)
    scores = energy @ v_a
    weights = masked_softmax(scores, mask)
    context = (weights[:, :, None] * encoder_states).sum(dim=1)
    return context, weights

"""
bug: a Python loop over the encoder time steps (correct values, not vectorised)
functions: [additive_attention]
questions: [additive_attention]
causes: [cause_python_loop]
"""
import torch


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    query = decoder_state @ W_a.T
    scores = []
    for t in range(encoder_states.shape[1]):
        scores.append(torch.tanh(query + encoder_states[:, t] @ U_a.T) @ v_a)
    scores = torch.stack(scores, dim=1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights

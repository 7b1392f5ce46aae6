"""
bug: the fix calls the one-step general_attention once per decoder step in a Python loop (right numbers, not vectorised)
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_python_loop]
"""
import torch


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    contexts, weights = [], []
    for t in range(decoder_states.shape[1]):
        projected = encoder_states @ W.T
        scores = (projected @ decoder_states[:, t].unsqueeze(-1)).squeeze(-1)
        w = masked_softmax(scores, mask, dim=-1)
        contexts.append((w.unsqueeze(1) @ encoder_states).squeeze(1))
        weights.append(w)
    return torch.stack(contexts, 1), torch.stack(weights, 1)

"""
bug: a Python loop over the batch (correct values, not vectorised)
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_python_loop]
example: true
"""
import torch


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    contexts, all_weights = [], []
    for b in range(encoder_states.shape[0]):
        H = encoder_states[b]  # (T, d_h)
        s = decoder_state[b].expand(H.shape[0], -1)  # (T, d_s)
        scores = torch.tanh(torch.cat([s, H], dim=-1) @ W_a.T) @ v_a  # (T,)
        w = masked_softmax(scores, None if mask is None else mask[b], dim=-1)
        contexts.append(w @ H)
        all_weights.append(w)
    return torch.stack(contexts), torch.stack(all_weights)

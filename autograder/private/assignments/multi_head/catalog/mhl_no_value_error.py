"""
bug: n_heads never checked: a bad n_heads ends in reshape's RuntimeError (or ZeroDivisionError), not the contract's ValueError
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_sizes_checked_late]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

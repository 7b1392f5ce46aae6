"""
bug: only d_h % n_heads is checked: n_heads = 0 raises ZeroDivisionError and n_heads = -2 (which divides 6) slips through to reshape's RuntimeError
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_sizes_checked_late]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if d_h % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} does not divide d_h={d_h}")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

"""
bug: the (B, T) mask passed to the softmax of the (B, n_heads, T) scores as it is: it raises when B != n_heads and is silently wrong (batch item k's mask on head k) when B == n_heads
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_mask_no_head_axis]
example: true
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)  # (B, n, T, d)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)  # (n, d_s, d)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)  # (B, n, T)
    weights = masked_softmax(scores, mask, dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

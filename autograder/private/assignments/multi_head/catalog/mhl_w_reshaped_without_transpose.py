"""
bug: W reshaped straight to (n_heads, d_s, d_head): head k gets a mix of W's rows and columns instead of its block W[:, k*d_head:(k+1)*d_head]
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_w_view, cause_mhl_heads_mixed]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)  # (B, n, T, d)
    Wk = W.reshape(n_heads, W.shape[0], d)  # (n, d_s, d), but not W's column blocks
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

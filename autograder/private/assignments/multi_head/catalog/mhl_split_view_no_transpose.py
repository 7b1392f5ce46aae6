"""
bug: encoder_states reshaped straight to (B, n_heads, T, d_head): the right shape, but each head gets a mix of time steps and features
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_split_view, cause_mhl_heads_mixed]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, n_heads, T, d)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

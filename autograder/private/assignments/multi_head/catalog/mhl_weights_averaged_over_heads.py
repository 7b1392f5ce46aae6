"""
bug: the per-head weights averaged over the heads before returning: weights (B, T), not one row per head (B, n_heads, T)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_weights_merged, cause_mhl_weights_no_head_axis]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)
    Wk = W.reshape(W.shape[0], n_heads, d).transpose(0, 1)
    scores = ((H @ Wk.transpose(-2, -1)) @ decoder_state[:, None, :, None]).squeeze(-1)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    context = (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h)
    return context, weights.mean(dim=1)

"""
bug: every head scores with the first d_head columns of W (W[:, :d_head]) instead of its own block
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_first_block, cause_mhl_heads_mixed]
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d).transpose(1, 2)  # (B, n, T, d)
    query = decoder_state @ W[:, :d]  # (B, d): the same block for every head
    scores = (H @ query[:, None, :, None]).squeeze(-1)  # (B, n, T)
    weights = masked_softmax(scores, None if mask is None else mask[:, None], dim=-1)
    return (weights.unsqueeze(-2) @ H).squeeze(-2).reshape(B, d_h), weights

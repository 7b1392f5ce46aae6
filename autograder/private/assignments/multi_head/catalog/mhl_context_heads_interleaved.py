"""
bug: the heads' contexts merged with a transpose first: (B, n_heads, d_head) -> (B, d_head, n_heads) -> (B, d_h) interleaves the heads' features
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_mhl_context_interleaved, cause_mhl_heads_mixed]
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
    heads = (weights.unsqueeze(-2) @ H).squeeze(-2)  # (B, n, d)
    return heads.transpose(1, 2).reshape(B, d_h), weights

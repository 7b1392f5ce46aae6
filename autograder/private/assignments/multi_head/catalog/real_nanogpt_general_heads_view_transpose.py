"""
correct: nanoGPT's way of making heads, applied to Luong general: view(B, T, n_head, C // n_head).transpose(1, 2) for the encoder states and the same for W's columns, the heads put back side by side with contiguous().view
functions: [multi_head_general_attention]
questions: []
source: karpathy/nanoGPT, model.py (CausalSelfAttention.forward: k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs); y.transpose(1, 2).contiguous().view(B, T, C)), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: B, T, C = x.size(); x.view(B, T, nh, C // nh).transpose(1, 2) # (B, nh, T, hs); scores with @ on the head axis in front; the heads merged with a contiguous view
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, C = encoder_states.size()
    if n_heads < 1 or C % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} must divide {C}")
    hs = C // n_heads
    h = encoder_states.view(B, T, n_heads, hs).transpose(1, 2)  # (B, nh, T, hs)
    w = W.view(W.size(0), n_heads, hs).transpose(0, 1)  # (nh, d_s, hs)
    q = decoder_state.view(B, 1, 1, -1) @ w  # (B, nh, 1, hs): s W_k, since s . (W_k h) = (s W_k) . h
    att = (q @ h.transpose(-2, -1)).squeeze(2)  # (B, nh, T)
    att = masked_softmax(att, None if mask is None else mask.view(B, 1, T), dim=-1)
    y = att.unsqueeze(2) @ h  # (B, nh, 1, hs)
    return y.transpose(1, 2).contiguous().view(B, C), att

"""
bug: The Annotated Transformer's masking in each head: mask.unsqueeze(1) ("same mask applied to all h heads") and masked_fill(mask == 0, -1e9) with a plain softmax: a batch row with no real token gets uniform weights and the mean context, and in float16 -1e9 does not fit (masked_fill raises)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_dead_uniform, cause_fill_overflow]
source: harvardnlp, The Annotated Transformer (MultiHeadedAttention.forward: mask = mask.unsqueeze(1); query.view(nbatches, -1, self.h, self.d_k).transpose(1, 2); attention(): scores.masked_fill(mask == 0, -1e9), scores.softmax(dim=-1)), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: x.view(nbatches, -1, h, d_k).transpose(1, 2) to make heads; mask.unsqueeze(1) for the heads axis; masked_fill(mask == 0, -1e9); softmax(dim=-1); x.transpose(1, 2).contiguous().view(nbatches, -1, h * d_k)
"""


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    nbatches, T, d_model = encoder_states.shape
    if n_heads < 1 or d_model % n_heads != 0:
        raise ValueError("d_model must be a multiple of n_heads")
    d_k = d_model // n_heads
    if mask is not None:
        mask = mask.unsqueeze(1)  # same mask applied to all heads: (B, 1, T)
    key = encoder_states.view(nbatches, -1, n_heads, d_k).transpose(1, 2)  # (B, h, T, d_k)
    query = (decoder_state @ W).view(nbatches, -1, n_heads, d_k).transpose(1, 2)  # (B, h, 1, d_k)
    scores = (query @ key.transpose(-2, -1)).squeeze(-2)  # (B, h, T)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    x = p_attn.unsqueeze(-2) @ key  # (B, h, 1, d_k)
    return x.transpose(1, 2).contiguous().view(nbatches, n_heads * d_k), p_attn

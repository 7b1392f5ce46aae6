"""
bug: LLMs-from-scratch's first self-attention uses keys.T, which is only a transpose for 2-D tensors: batched (3-D or 4-D) inputs fail or reverse every axis
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_batched_as_matrix]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (SelfAttention_v1/v2: attn_scores = queries @ keys.T; softmax(attn_scores / keys.shape[-1]**0.5)), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: attn_scores = queries @ keys.T; attn_weights = softmax(attn_scores / keys.shape[-1] ** 0.5) (here through the kit's masked_softmax); context_vec = attn_weights @ values
"""
def scaled_dot_product_attention(query, key, value, mask=None):
    attn_scores = query @ key.T
    attn_weights = masked_softmax(attn_scores / key.shape[-1] ** 0.5, mask, dim=-1)
    return attn_weights @ value, attn_weights

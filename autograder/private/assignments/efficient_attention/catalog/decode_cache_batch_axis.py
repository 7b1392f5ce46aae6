"""
bug: the cache is grown with torch.cat([cache_k, k]) and its default dim=0: along the batch axis, not the positions
functions: [decode_step]
questions: [decode_step]
causes: [cause_ea_cache_batch_axis, cause_broadcast]
"""
import torch


def decode_step(model, token, cache=None):
    t = 0 if cache is None else cache[0][0].shape[-2]
    x = model.embed(token)[:, None, :]
    D = x.shape[-1]
    x = x + positional_encoding(t + 1, D, dtype=x.dtype)[t]
    grown = []
    for i, block in enumerate(model.blocks):
        attn = block.attn
        h = block.ln1(x)
        q = split_heads(attn.q_proj(h), attn.n_heads)
        k = split_heads(attn.k_proj(h), attn.n_heads)
        v = split_heads(attn.v_proj(h), attn.n_heads)
        if cache is not None:
            k = torch.cat([cache[i][0], k])
            v = torch.cat([cache[i][1], v])
        heads, _ = scaled_dot_product_attention(q, k, v)
        x = x + attn.out_proj(merge_heads(heads))
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return model.head(model.ln_f(x))[:, 0], grown

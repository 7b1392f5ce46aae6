"""
bug: the keys and values that go into the cache are projected from the block input x, not from ln1(x): the cache stores another projection than the full forward computes
functions: [decode_step]
questions: [decode_step]
causes: [cause_ea_keys_before_norm]
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
        k = split_heads(attn.k_proj(x), attn.n_heads)
        v = split_heads(attn.v_proj(x), attn.n_heads)
        if cache is not None:
            k = torch.cat([cache[i][0], k], dim=2)
            v = torch.cat([cache[i][1], v], dim=2)
        heads, _ = scaled_dot_product_attention(q, k, v)
        x = x + attn.out_proj(merge_heads(heads))
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return model.head(model.ln_f(x))[:, 0], grown

"""
correct: each step allocates the grown cache and writes the old positions and the new one into it in place (a preallocated buffer, as inference servers keep one), instead of torch.cat
functions: [decode_step]
questions: []
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
        new_k = split_heads(attn.k_proj(h), attn.n_heads)
        new_v = split_heads(attn.v_proj(h), attn.n_heads)
        B, n_heads, _, d_head = new_k.shape
        k = new_k.new_empty(B, n_heads, t + 1, d_head)
        v = new_v.new_empty(B, n_heads, t + 1, d_head)
        if cache is not None:
            k[:, :, :t] = cache[i][0]
            v[:, :, :t] = cache[i][1]
        k[:, :, t] = new_k[:, :, 0]
        v[:, :, t] = new_v[:, :, 0]
        heads, _ = scaled_dot_product_attention(q, k, v)
        x = x + attn.out_proj(merge_heads(heads))
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return model.head(model.ln_f(x))[:, 0], grown

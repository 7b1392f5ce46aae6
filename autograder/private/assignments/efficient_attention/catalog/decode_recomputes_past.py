"""
bug: the step keeps the tokens so far on the model and runs the full forward on all of them for the logits (every past position recomputed at every step); the cache is grown right, beside it, for show: the right values at a cost that grows with the square of the positions
functions: [decode_step]
questions: [decode_step]
causes: [cause_ea_recomputes_past]
"""
import torch


def decode_step(model, token, cache=None):
    seen = token[:, None] if cache is None else torch.cat([model.seen_tokens, token[:, None]], dim=1)
    model.seen_tokens = seen
    logits = model(seen)[:, -1]
    t = seen.shape[1] - 1
    x = model.embed(token)[:, None, :]
    x = x + positional_encoding(t + 1, x.shape[-1], dtype=x.dtype)[t]
    grown = []
    for i, block in enumerate(model.blocks):
        attn = block.attn
        h = block.ln1(x)
        q = split_heads(attn.q_proj(h), attn.n_heads)
        k = split_heads(attn.k_proj(h), attn.n_heads)
        v = split_heads(attn.v_proj(h), attn.n_heads)
        if cache is not None:
            k = torch.cat([cache[i][0], k], dim=2)
            v = torch.cat([cache[i][1], v], dim=2)
        heads, _ = scaled_dot_product_attention(q, k, v)
        x = x + attn.out_proj(merge_heads(heads))
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return logits, grown

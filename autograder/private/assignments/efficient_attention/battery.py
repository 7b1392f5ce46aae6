"""Hostile battery cases of this assignment (its folder's battery): the judge's cost checks
attacked through its own graded parts, the shapes of `autograder.audit.hostile.cases_costs`
filled with the catalog's costly code. Registered into `cases.CASES` on import.

- `ea_blocked_*`: the full-matrix attention written as blocks (`blocked_full_matrix`) alone,
  lifting its call's memory cap first, and catching the cap's error with zeros;
- `ea_decode_*`: the decoder that recomputes every past position (`decode_recomputes_past`)
  alone, and one that calls the watched attention and projections "for show", one position
  at a time on zeros, while it computes the logits of every position inline (F.linear, its
  own softmax: no watched call sees the work).
"""

from autograder import config
from autograder.audit.hostile.cases import _catalog_source
from autograder.audit.hostile.cases_costs import call_log_cases, memory_cap_cases

HOME = "efficient_attention"
QUESTIONS = list(config.load().questions(HOME))

FOR_SHOW = """
def decode_step(model, token, cache=None):
    F = torch.nn.functional
    seen = token[:, None] if cache is None else torch.cat([model.seen_tokens, token[:, None]], dim=1)
    model.seen_tokens = seen
    B, T = seen.shape
    dtype = model.head.weight.dtype
    grown = []
    for i, block in enumerate(model.blocks):  # for show: one position, on zeros
        attn = block.attn
        h = torch.zeros(B, 1, attn.q_proj.in_features, dtype=dtype)
        q, k, v = (split_heads(p(h), attn.n_heads) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
        if cache is not None:
            k, v = torch.cat([cache[i][0], k], dim=2), torch.cat([cache[i][1], v], dim=2)
        scaled_dot_product_attention(q, k, v)
        attn.out_proj(h)
        grown.append((k, v))
    model.head(torch.zeros(B, 1, model.head.in_features, dtype=dtype))

    def lin(m, z):
        return F.linear(z, m.weight, m.bias)

    x = model.embed(seen)  # the work, inline: every position again
    x = x + positional_encoding(T, x.shape[-1], dtype=x.dtype)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for block in model.blocks:
        attn = block.attn
        h = block.ln1(x)
        q, k, v = (split_heads(lin(p, h), attn.n_heads) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        x = x + lin(attn.out_proj, merge_heads(scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v))
        x = x + lin(block.ffn.linear2, torch.relu(lin(block.ffn.linear1, block.ln2(x))))
    return lin(model.head, model.ln_f(x))[:, -1], grown
"""

memory_cap_cases(
    "ea_blocked",
    HOME,
    "blocked_attention",
    QUESTIONS,
    "blocked_attention",
    _catalog_source(HOME, "blocked_full_matrix"),
)
call_log_cases(
    "ea_decode",
    HOME,
    "decode_step",
    QUESTIONS,
    "decode_step",
    _catalog_source(HOME, "decode_recomputes_past"),
    FOR_SHOW,
)

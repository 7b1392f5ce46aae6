"""This assignment's synthetic class for the similarity audit (`autograder.audit.similar_class`):
`honest_student(rng)` writes its three graded functions as one student would, each step
written from the student's own choices (the ones the catalog's correct variants and the
tutorials use: `@`, `matmul` or `einsum`; `masked_fill` or `where`; `nan_to_num` or a row
test for fully masked rows; ...) and names of their own. Audit only: no part of its suites.
"""

from autograder.audit.similar_class import COMMENTS, pick

FUNCTIONS = ("causal_mask", "padding_mask", "scaled_dot_product_attention")
_NAMES = {
    "d_k": ("d_k", "dk", "d", "head_dim", "dim_k", "depth"),
    "scores": ("scores", "logits", "s", "att", "energy", "sim"),
    "weights": ("weights", "attn", "probs", "alpha", "p_attn", "w"),
    "output": ("output", "out", "context", "result", "y", "ctx"),
    "rows": ("rows", "i", "q_idx", "r", "pos_q"),
    "cols": ("cols", "j", "k_idx", "c", "pos_k"),
    "positions": ("positions", "pos", "idx", "steps", "rng", "ar"),
    "empty": ("empty", "none_allowed", "all_masked", "dead", "no_keys"),
}


def _sdpa(rng, n):
    d, s, w, o, e = (n[k] for k in ("d_k", "scores", "weights", "output", "empty"))
    lines = [pick(rng, (f"{d} = query.shape[-1]", f"{d} = query.size(-1)", f"{d} = key.shape[-1]"))]
    lines += pick(
        rng,
        (
            [f"{s} = query @ key.transpose(-2, -1) / math.sqrt({d})"],
            [f"{s} = torch.matmul(query, key.transpose(-2, -1)) / {d} ** 0.5"],
            [f'{s} = torch.einsum("...qd,...kd->...qk", query, key) * {d} ** -0.5'],
            [f"{s} = (query / math.sqrt({d})) @ key.mT"],
            [f"{s} = query @ key.transpose(-1, -2)", f"{s} = {s} / math.sqrt({d})"],
            [
                f"{s} = torch.bmm(query.reshape(-1, *query.shape[-2:]), key.reshape(-1, *key.shape[-2:]).transpose(1, 2))",
                f"{s} = {s}.reshape(*query.shape[:-1], key.shape[-2]) / math.sqrt({d})",
            ],
        ),
    )
    masked = pick(
        rng,
        (
            [f"{s} = {s}.masked_fill(~mask, float('-inf'))"],
            [f"{s} = torch.where(mask, {s}, torch.full_like({s}, -math.inf))"],
            [f"{s} = {s}.masked_fill(mask == 0, float('-inf'))"],
            [f"{s} = {s}.masked_fill(mask.logical_not(), -torch.inf)"],
        ),
    )
    lines += ["if mask is not None:"] + ["    " + x for x in masked]
    lines += pick(
        rng,
        (
            [f"{w} = torch.softmax({s}, dim=-1)", f"{w} = torch.nan_to_num({w}, nan=0.0)"],
            [f"{w} = F.softmax({s}, dim=-1).nan_to_num(0.0)"],
            [f"{w} = {s}.softmax(-1)", f"{w} = {w}.masked_fill(torch.isnan({w}), 0.0)"],
            [
                f"{e} = torch.isinf({s}).all(dim=-1, keepdim=True)",
                f"{w} = torch.softmax({s}.masked_fill({e}, 0.0), dim=-1)",
                f"{w} = {w}.masked_fill({e}, 0.0)",
            ],
            [
                f"{s} = {s} - {s}.amax(dim=-1, keepdim=True).clamp_min(-1e30)",
                f"{w} = {s}.exp()",
                f"{w} = {w} / {w}.sum(dim=-1, keepdim=True).clamp_min(1e-30)",
            ],
        ),
    )
    lines += pick(
        rng,
        (
            [f"{o} = {w} @ value", f"return {o}, {w}"],
            [f"{o} = torch.matmul({w}, value)", f"return {o}, {w}"],
            [f'{o} = torch.einsum("...qk,...kd->...qd", {w}, value)', f"return {o}, {w}"],
            [f"return {w} @ value, {w}"],
        ),
    )
    if rng.random() < 0.3:
        lines.insert(0, "assert query.shape[-1] == key.shape[-1]")
    return "def scaled_dot_product_attention(query, key, value, mask=None):\n" + _body(lines, rng)


def _causal(rng, n):
    r, c = n["rows"], n["cols"]
    lines = pick(
        rng,
        (
            ["return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()"],
            ["return torch.tril(torch.ones(seq_len, seq_len, device=device)).bool()"],
            [f"{r} = torch.arange(seq_len, device=device)", f"return {r}[:, None] >= {r}[None, :]"],
            [
                f"{r} = torch.arange(seq_len, device=device).unsqueeze(1)",
                f"{c} = torch.arange(seq_len, device=device).unsqueeze(0)",
                f"return {c} <= {r}",
            ],
            ["return ~torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).triu(1)"],
        ),
    )
    return "def causal_mask(seq_len, device=None):\n" + _body(lines, rng)


def _padding(rng, n):
    p = n["positions"]
    head = pick(
        rng,
        (
            ["if max_len is None:", "    max_len = int(lengths.max())"],
            ["max_len = max_len or int(lengths.max().item())"],
        ),
    )
    tail = pick(
        rng,
        (
            [f"{p} = torch.arange(max_len, device=lengths.device)", f"return {p}.unsqueeze(0) < lengths.unsqueeze(1)"],
            [f"{p} = torch.arange(max_len, device=lengths.device)[None, :]", f"return {p} < lengths[:, None]"],
            [
                "return torch.arange(max_len, device=lengths.device).expand(len(lengths), max_len) < lengths.unsqueeze(-1)"
            ],
        ),
    )
    return "def padding_mask(lengths, max_len=None):\n" + _body(head + tail, rng)


def _body(lines, rng):
    out = []
    for line in lines:
        if rng.random() < 0.25:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"    {indent}# {pick(rng, COMMENTS)}")
        out.append("    " + line)
    return "\n".join(out) + "\n"


MAKERS = {"causal_mask": _causal, "padding_mask": _padding, "scaled_dot_product_attention": _sdpa}


def honest_student(rng):
    """{function: source}: one student's own solutions."""
    names = {k: pick(rng, v) for k, v in _NAMES.items()}
    return {f: MAKERS[f](rng, names) for f in FUNCTIONS}

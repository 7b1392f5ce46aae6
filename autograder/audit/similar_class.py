"""A synthetic class for measuring the similar-submissions check (`autograder.report.similar`).

`disguise(source, rng)` is what a student who copies does to hide it: the locals renamed
(consistently), two neighbouring statements that do not depend on each other swapped, the
docstring and comments rewritten, the layout changed (the code is printed again from its
tree). `honest_class(n, rng)` writes `n` independent solutions of scaled_dot_product's three
functions, each from a student's own choices of how to write every step (the ones the
catalog's correct variants and the tutorials use: `@`, `matmul` or `einsum`; `masked_fill`
or `where`; `nan_to_num` or a row test for fully masked rows; ...) and names of their own,
so independent solutions of a five-line function look as alike as they do in a real class.
"""

import ast

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
_COMMENTS = (
    "scale by sqrt(d_k)",
    "shape (..., T_q, T_k)",
    "apply the mask",
    "softmax over the keys",
    "weighted sum of the values",
    "rows with no allowed key get zeros",
    "see the lecture notes",
    "TODO: check shapes",
    "compute attention",
    "b, t, d",
)


def _pick(rng, options):
    return options[rng.randrange(len(options))]


def _sdpa(rng, n):
    d, s, w, o, e = (n[k] for k in ("d_k", "scores", "weights", "output", "empty"))
    lines = [_pick(rng, (f"{d} = query.shape[-1]", f"{d} = query.size(-1)", f"{d} = key.shape[-1]"))]
    lines += _pick(
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
    masked = _pick(
        rng,
        (
            [f"{s} = {s}.masked_fill(~mask, float('-inf'))"],
            [f"{s} = torch.where(mask, {s}, torch.full_like({s}, -math.inf))"],
            [f"{s} = {s}.masked_fill(mask == 0, float('-inf'))"],
            [f"{s} = {s}.masked_fill(mask.logical_not(), -torch.inf)"],
        ),
    )
    lines += ["if mask is not None:"] + ["    " + x for x in masked]
    lines += _pick(
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
    lines += _pick(
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
    lines = _pick(
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
    head = _pick(
        rng,
        (
            ["if max_len is None:", "    max_len = int(lengths.max())"],
            ["max_len = max_len or int(lengths.max().item())"],
        ),
    )
    tail = _pick(
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
            out.append(f"    {indent}# {_pick(rng, _COMMENTS)}")
        out.append("    " + line)
    return "\n".join(out) + "\n"


MAKERS = {"causal_mask": _causal, "padding_mask": _padding, "scaled_dot_product_attention": _sdpa}


def honest_student(rng):
    """{function: source}: one student's own solutions."""
    names = {k: _pick(rng, v) for k, v in _NAMES.items()}
    return {f: MAKERS[f](rng, names) for f in FUNCTIONS}


def honest_class(n, rng):
    """{id: {function: source}}: `n` students writing each function their own way."""
    return {f"s{i:03d}": honest_student(rng) for i in range(n)}


# -- what a copier does ------------------------------------------------------------------------
class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def _swap_neighbours(body, rng):
    """Swap one pair of neighbouring assignments where neither reads what the other writes."""
    spots = []
    for i in range(len(body) - 1):
        a, b = body[i], body[i + 1]
        if isinstance(a, ast.Assign) and isinstance(b, ast.Assign):
            written_a = {n.id for t in a.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            written_b = {n.id for t in b.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            read_a = {n.id for n in ast.walk(a.value) if isinstance(n, ast.Name)}
            read_b = {n.id for n in ast.walk(b.value) if isinstance(n, ast.Name)}
            if not (written_a & read_b) and not (written_b & read_a) and not (written_a & written_b):
                spots.append(i)
    if spots:
        i = _pick(rng, spots)
        body[i], body[i + 1] = body[i + 1], body[i]


def _disguise_function(fn, rng):
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    local = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - params)
    mapping = {name: f"{_pick(rng, ('tmp', 'val', 'my', 'x', 'res'))}_{name[:2]}{k}" for k, name in enumerate(local)}
    _Rename(mapping).visit(fn)
    if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(getattr(fn.body[0], "value", None), ast.Constant):
        fn.body = fn.body[1:] or [ast.Pass()]
    _swap_neighbours(fn.body, rng)


def disguise(source, rng):
    """`source` as a copier hands it in: in each function (and method) the locals renamed,
    the docstring dropped, two independent neighbours swapped; then printed again with
    comments of the copier's own."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _disguise_function(node, rng)
    out = []
    for line in ast.unparse(ast.fix_missing_locations(tree)).split("\n"):
        if line.strip() and rng.random() < 0.4:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# {_pick(rng, _COMMENTS)}")
        out.append(line)
    return "\n".join(out) + "\n"


def planted_class(n, copies, rng, own=0):
    """({id: {function: source}}, {(copier, source id)}): `n - copies` honest students, and
    `copies` students each handing in a disguised copy of one honest student's functions
    but `own` of them, which the copier writes on their own."""
    honest = honest_class(n - copies, rng)
    ids = sorted(honest)
    out = dict(honest)
    planted = set()
    for k in range(copies):
        victim = _pick(rng, ids)
        copier = f"c{k:03d}"
        mine = set(rng.sample(FUNCTIONS, own))
        fresh = honest_student(rng)
        out[copier] = {f: fresh[f] if f in mine else disguise(src, rng) for f, src in honest[victim].items()}
        planted.add(tuple(sorted((copier, victim))))
    return out, planted

"""Hostile battery cases of this assignment: a package the grader holds but the notebook may not
use, asked for past the import statement. Registered into `cases.CASES` on import."""

from autograder.audit.hostile.cases import case, ipynb, reference, replace_function

# PyYAML: a dependency of the kit, so installed wherever the kit runs (a checkout, the
# Gradescope root, the installed wheel), and no package the notebook is told it may use.
ROUTES = {
    "causal_mask": (
        "def causal_mask(seq_len, device=None):\n"
        "    __import__('yaml')\n"
        "    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()\n"
    ),
    "padding_mask": (
        "def padding_mask(lengths, max_len=None):\n"
        "    import importlib\n"
        "    importlib.import_module('yaml')\n"
        "    n = int(lengths.max()) if max_len is None else max_len\n"
        "    return torch.arange(n, device=lengths.device)[None, :] < lengths[:, None]\n"
    ),
    "scaled_dot_product_attention": (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    exec('import yaml', {})\n"
        "    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = scores.masked_fill(~mask, float('-inf'))\n"
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    return weights @ value, weights\n"
    ),
}


@case(
    "import_past_the_statement",
    "each graded function otherwise right, asking for PyYAML (installed where the kit runs) by "
    "__import__, importlib.import_module and exec of a string: refused as the import statement is, "
    "on every deployment alike",
    questions_zero=list(ROUTES),
    questions_keep_full=["by_hand"],
    reason_contains=["No module named 'yaml'"],
)
def _():
    nb = reference(demo=False)
    for name, source in ROUTES.items():
        replace_function(nb, name, source)
    return ipynb(nb)

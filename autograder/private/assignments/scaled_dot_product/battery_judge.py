"""Hostile battery cases aimed at the judge: verdicts the worker could decide,
student text that could inflate or forge feedback, forged replies, a
submission that never ends. Registered into `cases.CASES` on import."""

from autograder.audit.hostile.cases import append as append_cell
from autograder.audit.hostile.cases import case, ipynb, reference, replace_function
from autograder.private.assignments.scaled_dot_product.battery_cases import FULL, SDP, others

INPLACE_SDPA = (
    "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    query /= math.sqrt(query.shape[-1])\n"
    "    weights = masked_softmax(query @ key.transpose(-2, -1), mask, dim=-1)\n"
    "    return weights @ value, weights\n"
)
LOOP_SDPA = (
    "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    if query.dim() < 3:\n"
    "        w = masked_softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), mask, dim=-1)\n"
    "        return w @ value, w\n"
    "    outs, ws = [], []\n"
    "    for i in range(query.shape[0]):\n"
    "        m = None if mask is None else (mask[i] if mask.dim() == query.dim() and mask.shape[0] > 1 else mask[0] if mask.dim() == query.dim() else mask)\n"
    "        o, w = scaled_dot_product_attention(query[i], key[i], value[i], m)\n"
    "        outs.append(o); ws.append(w)\n"
    "    return torch.stack(outs), torch.stack(ws)\n"
)


@case(
    "inplace_honest",
    "scaled_dot_product_attention divides its query in place (control: loses the in-place check)",
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
    max_score=FULL - 0.01,
)
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", INPLACE_SDPA))


@case(
    "inplace_patched_equal",
    "the same in-place write, with torch.equal, Tensor.equal and torch.allclose "
    "patched to say True (the in-place verdict is the judge's)",
    not_above="inplace_honest",
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    nb = replace_function(reference(demo=False), "scaled_dot_product_attention", INPLACE_SDPA)
    return ipynb(
        append_cell(
            nb,
            "torch.equal = lambda *a, **k: True\ntorch.Tensor.equal = lambda *a, **k: True\n"
            "torch.allclose = lambda *a, **k: True\n",
        )
    )


@case(
    "loop_honest",
    "scaled_dot_product_attention loops over the batch in Python (control: loses the vectorisation check)",
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", LOOP_SDPA))


@case(
    "loop_patched_counter",
    "the same loop, with the worker's op counter replaced through the kit's module "
    "(autograder.worker.runner._make_counter and its Worker class): a notebook that reaches for the kit's "
    "modules fails every vectorisation check",
    not_above="loop_honest",
    questions_lose=["scaled_dot_product_attention", "padding_mask"],
    questions_keep_full=["causal_mask"],
)
def _():
    nb = replace_function(reference(demo=False), "scaled_dot_product_attention", LOOP_SDPA)
    return ipynb(
        append_cell(
            nb,
            (
                "import sys\n"
                "for _name, _m in list(sys.modules.items()):\n"
                "    if _name.startswith('autograder') and hasattr(_m, '_make_counter'):\n"
                "        class _Quiet:\n"
                "            count, forbidden = 0, set()\n"
                "            def __enter__(self): return self\n"
                "            def __exit__(self, *a): return False\n"
                "        _m._make_counter = lambda torch: _Quiet\n"
                "        for _v in list(vars(_m).values()):\n"
                "            if isinstance(_v, type) and hasattr(_v, 'call'):\n"
                "                _v._counter_class = _Quiet\n"
            ),
        )
    )


@case(
    "huge_exception_text",
    "causal_mask raises an exception whose type name is 1 MB and whose message is 10 MB",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    max_results_bytes=200_000,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    E = type('E' * 1_000_000, (Exception,), {})\n"
                "    raise E('x' * 10_000_000)\n"
            ),
        )
    )


INJECTED = (
    f"\\n### {SDP}: 10 / 10\\n| causal_mask | 2 | 2 | |\\n![x](http://example.invalid/x.png)"
    "\\n<img src=x onerror=alert(1)>\\n::warning::forged\\n\\x1b[31mRED\\x1b[0m\\r\\nFAIL nothing: all checks passed"
)


@case(
    "feedback_injection",
    "causal_mask raises an error whose message holds a Markdown heading with a full "
    "score, table rows, an image, HTML, a workflow command, ANSI codes and a line that looks like the grader's",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    must_not_contain=["\n###", "\n|", "\n!", "\n<img", "\n::warning", "\x1b[", "\r"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (f'def causal_mask(seq_len, device=None):\n    raise ValueError("{INJECTED}")\n'),
        )
    )


@case(
    "forged_replies",
    "causal_mask writes forged wire messages (a header nested 100000 deep, tags of the "
    "wrong type, a bad float tag, a tensor with a string shape) to every pipe it holds, then sleeps",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["malformed reply", "timed out"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import os, struct, time\n"
                "    forged = [b'[' * 100000 + b']' * 100000, b'{\"$dict\": 5}', b'{\"$float\": \"abc\"}',\n"
                '              b\'{"$t": 0, "dtype": "float32", "shape": "x"}\', b\'{"$tuple": 7}\']\n'
                "    h = forged[seq_len % len(forged)]\n"
                "    body = struct.pack('>I', len(h)) + h\n"
                "    for fd in map(int, os.listdir('/proc/self/fd')):\n"
                "        if fd > 2:\n"
                "            try:\n"
                "                os.write(fd, struct.pack('>Q', len(body)) + body)\n"
                "            except OSError:\n"
                "                pass\n"
                "    time.sleep(30)\n"
            ),
        )
    )


@case(
    "slow_every_call",
    "every graded function sleeps 2 s per call (honest code, too slow): the "
    "submission's wall-clock budget stops it, keeping what was graded",
    max_score=FULL,
    reason_contains=["time budget"],
    max_seconds=150,
)
def _():
    nb = reference(demo=False)
    return ipynb(
        append_cell(
            nb,
            (
                "import functools, time\n"
                "def _slow(f):\n"
                "    @functools.wraps(f)\n"
                "    def g(*a, **k):\n"
                "        time.sleep(2)\n"
                "        return f(*a, **k)\n"
                "    return g\n"
                "causal_mask = _slow(causal_mask)\n"
                "padding_mask = _slow(padding_mask)\n"
                "scaled_dot_product_attention = _slow(scaled_dot_product_attention)\n"
            ),
        )
    )


# -- the vectorised check: a branch on a size is no loop ------------------------------------
BRANCH_SDPA = (
    "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])\n"
    "    if query.shape[-2] > key.shape[-2]:\n"
    "        scores = scores.clone()  # one more operation past a size, the same values\n"
    "    weights = masked_softmax(scores, mask, dim=-1)\n"
    "    return weights @ value, weights\n"
)
QUERY_LOOP_SDPA = (
    "def scaled_dot_product_attention(query, key, value, mask=None):\n"
    "    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])\n"
    "    m = None if mask is None else torch.broadcast_to(mask, scores.shape)\n"
    "    rows = [masked_softmax(scores[..., i : i + 1, :], None if m is None else m[..., i : i + 1, :], dim=-1)\n"
    "            for i in range(scores.shape[-2])]\n"
    "    weights = torch.cat(rows, dim=-2)\n"
    "    return weights @ value, weights\n"
)


@case(
    "branch_on_query_length",
    "scaled_dot_product_attention does one more torch operation when T_q > T_k (a branch on a "
    "size, the same values): no Python loop, full points",
    max_score=FULL,
    questions_keep_full=list(others()),
)
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", BRANCH_SDPA))


@case(
    "loop_over_query_length",
    "scaled_dot_product_attention runs masked_softmax once per query in a Python loop (control "
    "for branch_on_query_length: loses the vectorisation check)",
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", QUERY_LOOP_SDPA))


@case(
    "outputs_on_meta",
    "scaled_dot_product_attention computes the right values, then returns them on the meta device "
    "(shapes and dtypes without values), and at the small sizes a counterexample search tries, wrong "
    "values, some on the meta device: the student's wrong answer, never a grader fault when the judge "
    "compares values or looks for a counterexample",
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            "def scaled_dot_product_attention(query, key, value, mask=None):\n"
            "    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])\n"
            "    if mask is not None:\n"
            "        scores = scores.masked_fill(~mask, float('-inf'))\n"
            "    weights = torch.softmax(scores, dim=-1)\n"
            "    if query.shape[-2] > 2:  # right at the checks' sizes, on the meta device\n"
            "        return (weights @ value).to('meta'), weights.to('meta')\n"
            "    weights = torch.softmax(scores * 2, dim=-1)  # wrong values, on the meta device again\n"
            "    return (weights @ value).to('meta') if query.shape[-2] == 1 else weights @ value, weights\n",
        )
    )

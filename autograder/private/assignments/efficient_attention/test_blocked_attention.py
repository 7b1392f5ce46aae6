"""Hidden tests: blocked_attention(query, key, value, mask=None, causal=False, block_size=32)
-> output (..., T_q, d_v).

The yardstick is the reference (`solutions/efficient_attention.py`) in float64, which
equals scaled_dot_product_attention's output (tests/ of the kit check it). Sizes keep
T_q != T_k != d_k != d_v, block sizes that do and do not divide T_k (1, one block, more
than T_k), padding before the keys (a first block with no allowed key), rows with no
allowed key at all, and causal queries that are the last T_q of T_k positions.
"""

import pytest

from autograder.private.assignments.efficient_attention import common
from autograder.private.solutions import efficient_attention as ref
from autograder.private.suites import calls, costs, dtypes, tensors, value_checks

QUESTION = "blocked_attention"
ASSIGNMENT = "efficient_attention"  # this folder's: its settings in grading.yml
NAME = "blocked_attention"
OUT = ("output",)
REF = ref.blocked_attention
# (leading axes, T_q, T_k, d_k, d_v, block_size)
SIZES = [
    ((), 3, 7, 4, 5, 3),
    ((2,), 5, 9, 4, 3, 4),
    ((2, 3), 4, 6, 5, 2, 1),
    ((3,), 6, 5, 3, 4, 16),  # one block: T_k < block_size
    ((2, 2), 4, 12, 6, 3, 4),
]


def inputs(lead, T_q, T_k, d_k, d_v, seed, scale=1.0):
    q = tensors.randn((*lead, T_q, d_k), seed, scale=scale)
    k = tensors.randn((*lead, T_k, d_k), seed + 1, scale=scale)
    v = tensors.randn((*lead, T_k, d_v), seed + 2)
    return [q, k, v]


def check(sub, cfg, args, kwargs, **opts):
    value_checks.check_values(
        sub, cfg, NAME, args, kwargs, REF, OUT, hints={"output": common.blocked_hint(args, kwargs, cfg)}, **opts
    )


def test_shapes_and_values(sub, cfg):
    for n, (lead, T_q, T_k, d_k, d_v, bs) in enumerate(SIZES):
        check(sub, cfg, inputs(lead, T_q, T_k, d_k, d_v, 10 * n), {"block_size": bs})


def test_large_scores(sub, cfg):
    """Scores in the hundreds, the largest in a late block: a running maximum that is not
    subtracted overflows, one that is not rescaled when it grows gives other weights."""
    q, k, v = inputs((2,), 3, 10, 4, 3, 70, scale=6.0)
    check(sub, cfg, [q, k, v], {"block_size": 3})


def test_padding(sub, cfg):
    B, T_q, T_k = 3, 4, 10
    q, k, v = inputs((B,), T_q, T_k, 5, 3, 80)
    pad = tensors.lengths_mask([10, 6, 3], T_k)  # (B, T_k): padding after the keys
    pad[2] = pad[2].flip(0)  # the last row's padding before its keys: its first blocks have no allowed key
    check(sub, cfg, [q, k, v], {"mask": pad[:, None, :], "block_size": 3})


def test_fully_masked_rows(sub, cfg):
    T_q, T_k = 5, 8
    q, k, v = inputs((2,), T_q, T_k, 4, 3, 90)
    mask = tensors.rand_mask((T_q, T_k), 91)
    mask[1] = False  # a query with no allowed key: a zero output
    mask[3, :4] = False  # a query whose first blocks are all masked
    check(sub, cfg, [q, k, v], {"mask": mask, "block_size": 2})


def test_causal(sub, cfg):
    for n, (T_q, T_k, bs) in enumerate([(7, 7, 3), (3, 8, 2), (1, 9, 4), (6, 6, 6)]):
        q, k, v = inputs((2,), T_q, T_k, 4, 3, 100 + 10 * n)
        check(sub, cfg, [q, k, v], {"causal": True, "block_size": bs})
    q, k, v = inputs((2,), 5, 5, 4, 3, 150)
    pad = tensors.lengths_mask([5, 3], 5)[:, None, :]  # (B, 1, T_k) with the causal mask
    check(sub, cfg, [q, k, v], {"mask": pad, "causal": True, "block_size": 2})


@pytest.mark.property  # a property: it earns nothing where the values are wrong
def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    q, k, v = inputs((2,), 4, 96, 8, 4, 200)  # 24 blocks of 4: sums of many terms in the running statistics
    pad = tensors.lengths_mask([96, 50], 96)[:, None, :]
    kwargs = {"mask": pad, "block_size": 4}
    dtypes.check_in_dtype(sub, cfg, NAME, [q, k, v], kwargs, REF, OUT, dtype, device, hints=None)


def test_fits_in_memory(sub, cfg):
    """A causal call at a length whose float32 score matrix alone is several times the cap
    (the kernel enforces it on that call: an allocation past it fails inside the worker):
    the blocks' running statistics fit with room to spare, and give the reference's output."""
    s = cfg.costs(ASSIGNMENT)["memory"]  # grading.yml: its margins by bench/cost_margins.py
    T, d_k = s["length"], s["d_k"]
    q, k, v = (tensors.randn((1, T, d_k), s["seed"] + i).float() for i in range(3))
    kwargs = {"causal": True, "block_size": s["block_size"]}
    want = REF(q.double(), k.double(), v.double(), **kwargs)
    what = calls.describe_call(NAME, [q, k, v], kwargs)
    costs.within_memory(
        sub, cfg, NAME, [q, k, v], want, s["cap_mb"], s["reference_mb"], kwargs=kwargs, what=what, out_names=OUT
    )

"""Hidden tests: decode_step(model, token, cache=None) -> (logits (B, V), cache).

The worker runs the provided `decode_logits(sizes, state, tokens)` (the judge's copy)
with the student's decode_step: a TransformerLM (the reference's, provided) built from
the judge's sizes and parameters, fed the judge's tokens one position at a time. Step
t's logits must be the full forward's at position t (the reference TransformerLM with
the same parameters, in float64), and the cache, one (k, v) per block, (B, n_heads,
T, d_head), the keys and values the full forward computes in each block.
"""

import pytest
import torch

from autograder.private.assignments.efficient_attention import decoding
from autograder.private.suites import checks as c

QUESTION = "decode_step"
# (B, T, V, D, h, F, L): all different; one position; one block
CASES = [(2, 6, 11, 8, 2, 12, 2), (3, 1, 7, 12, 3, 10, 1), (1, 5, 9, 6, 1, 9, 3)]


def full_logits(case, dtype=torch.float64):
    with torch.no_grad():
        return case.model(dtype)(case.tokens)


def test_step_by_step(sub, cfg):
    for n, sizes in enumerate(CASES):
        case = decoding.Run(*sizes, seed=10 * n)
        logits, _, what = decoding.run(sub, case)
        want = full_logits(case)
        c.check_meta(logits, f"{what} -> logits", tuple(want.shape), torch.float64, "cpu")
        c.assert_close(logits, want, f"{what} -> logits", cfg, torch.float64, hint=decoding.logits_hint(case))


def test_cache(sub, cfg):
    case = decoding.Run(2, 5, 11, 8, 2, 12, 2, seed=40)
    _, cache, what = decoding.run(sub, case)
    _, want = case.expected()
    for i, (pair, ref_pair) in enumerate(zip(cache, want)):
        for j, (got, exp) in enumerate(zip(pair, ref_pair)):
            label = f"{what} -> cache[{i}][{j}]"
            c.check_meta(got, label, tuple(exp.shape), torch.float64, "cpu", hint=None)
            c.assert_close(got, exp, label, cfg, torch.float64, hint=decoding.cache_hint(case, i, j))


@pytest.mark.property  # a property: it earns nothing where the values are wrong
def test_dtype_and_device(sub, cfg):
    case = decoding.Run(2, 4, 9, 8, 2, 12, 2, seed=60, scale=0.5)
    for name in cfg.devices.get("cpu", []):
        dtype = getattr(torch, name)
        if dtype == torch.float64:
            continue
        logits, _, what = decoding.run(sub, case, dtype)
        want = full_logits(case, dtype)
        c.check_meta(logits, f"{what} -> logits", tuple(want.shape), dtype, "cpu")
        c.assert_close(logits, want, f"{what} -> logits", cfg, dtype, hint=decoding.logits_hint(case, dtype))

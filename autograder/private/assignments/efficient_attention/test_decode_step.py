"""Hidden tests: decode_step(model, token, cache=None) -> (logits (B, V), cache).

The worker runs the provided `decode_logits(sizes, state, tokens)` (the judge's copy)
with the student's decode_step: a TransformerLM (the reference's, provided) built from
the judge's sizes and parameters, fed the judge's tokens one position at a time. Step
t's logits must be the full forward's at position t (the reference TransformerLM with
the same parameters, in float64), and the cache, one (k, v) per block, (B, n_heads,
T, d_head), the keys and values the full forward computes in each block.
"""

import math

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.assignments.efficient_attention import decoding
from autograder.private.suites import calls, costs, failing, value_checks

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
        value_checks.check_meta(logits, f"{what} -> logits", tuple(want.shape), torch.float64, "cpu")
        value_checks.assert_close(
            logits, want, f"{what} -> logits", cfg, torch.float64, hint=decoding.logits_hint(case, cfg)
        )


def test_cache(sub, cfg):
    case = decoding.Run(2, 5, 11, 8, 2, 12, 2, seed=40)
    _, cache, what = decoding.run(sub, case)
    _, want = case.expected()
    for i, (pair, ref_pair) in enumerate(zip(cache, want)):
        for j, (got, exp) in enumerate(zip(pair, ref_pair)):
            label = f"{what} -> cache[{i}][{j}]"
            value_checks.check_meta(got, label, tuple(exp.shape), torch.float64, "cpu", hint=None)
            value_checks.assert_close(got, exp, label, cfg, torch.float64, hint=decoding.cache_hint(case, i, j, cfg))


@pytest.mark.property  # a property: it earns nothing where the values are wrong
def test_dtype_and_device(sub, cfg):
    case = decoding.Run(2, 4, 9, 8, 2, 12, 2, seed=60, scale=0.5)
    for name in cfg.devices.get("cpu", []):
        dtype = getattr(torch, name)
        if dtype == torch.float64:
            continue
        logits, _, what = decoding.run(sub, case, dtype)
        want = full_logits(case, dtype)
        value_checks.check_meta(logits, f"{what} -> logits", tuple(want.shape), dtype, "cpu")
        value_checks.assert_close(
            logits, want, f"{what} -> logits", cfg, dtype, hint=decoding.logits_hint(case, cfg, dtype)
        )


def test_one_position_per_step(sub, cfg):
    """The judge answers the attention and every nn.Linear the steps call (keyed answers: an
    output that did not go through them is wrong) and sees each call: every attention call
    has one query, every projection computes one row per sequence. The logits must be the
    reference decoder's with the same answers."""
    one_position_per_step(sub, cfg, seed=80)


def one_position_per_step(sub, cfg, seed):
    """test_one_position_per_step on the case and keyed answers drawn from `seed` (the cost
    bench runs it over seeds: bench/cost_margins.py)."""
    case = decoding.Run(2, 6, 11, 8, 2, 12, 2, seed=seed)
    B, T = case.tokens.shape
    answers = decoding.keyed_answers(seed=seed + 1)
    state = dict(case.state)
    what = case.what()
    reply, watch = costs.watched_call(
        sub, cfg, decoding.DRIVER, [dict(case.sizes), state, case.tokens], answers, isolate=[]
    )
    n_layers = case.sizes["n_layers"]
    recomputes = Msg("cause_ea_recomputes_past")
    costs.check_sizes(watch, decoding.ATTENTION, 0, -2, [1] * (T * n_layers), what, recomputes)
    rows = [math.prod(s.shape(0)[:-1]) if s.shape(0) else None for s in watch.calls(decoding.LINEAR)]
    costs.must_call(watch, decoding.LINEAR, what)
    if any(r is None or r > B for r in rows):
        failing.fail(failing.caused(t("ea_rows_per_step", what=what, most=max(r or 0 for r in rows), B=B), recomputes))
    logits = calls.tensor(reply.value[0] if isinstance(reply.value, (list, tuple)) else reply.value, what)
    want = decoding.replayed(case, answers)
    value_checks.check_meta(logits, f"{what} -> logits", tuple(want.shape), torch.float64, "cpu")
    value_checks.assert_close(logits, want, f"{what} -> logits", cfg, torch.float64)

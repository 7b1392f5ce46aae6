"""Hidden tests: fixed_general_attention, the provided broken function fixed.

Luong general attention for every decoder step at once (`drill.py` for the
shapes and sizes). Every check runs on sizes that are all different, where the
provided bug crashes, and the values checks also on sizes where d_s == d_h and
B == T_dec, where it (or a 'fix' that only makes sizes fit, such as a reshape
of W) runs silently wrong: the feedback names which.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.assignments.classic_attention import drill
from autograder.private.assignments.classic_attention.drill import OUT, SIZES
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import calls, causes, dtypes, failing, grads, properties, tensors, value_checks

QUESTION = "fixed_general_attention"
NAME = "fixed_general_attention"
REF = ref.fixed_general_attention


def test_shapes_and_values(sub, cfg):
    for k, size in enumerate(SIZES):
        for masked in (False, True):
            args, kwargs = drill.inputs(*size, seed=1200 + 10 * k, mask=masked)
            got, _ = value_checks.check_values(
                sub,
                cfg,
                NAME,
                args,
                kwargs,
                REF,
                OUT,
                hints=drill.hints(args, kwargs, cfg),
                shape_hints=drill.shape_hints(args),
            )
            sums = got["weights"].double().sum(-1)
            value_checks.assert_close(
                sums,
                torch.ones_like(sums),
                t("weights_summed_keys", what=NAME),
                cfg,
                hint=lambda g, e: Msg("cause_rows_not_one_t"),
            )


def test_padding(sub, cfg):
    """Padded keys get weight exactly 0 at every decoder step, and changing them changes nothing."""
    B, T_dec, T_enc, d_s, d_h = SIZES[0]
    args, kwargs = drill.inputs(B, T_dec, T_enc, d_s, d_h, seed=1300, lengths=[T_enc, 2])
    got, _ = value_checks.check_runs(sub, cfg, NAME, args, kwargs, REF, OUT, shape_hints=drill.shape_hints(args))
    allowed = kwargs["mask"].unsqueeze(1).expand(B, T_dec, T_enc)
    leak = got["weights"][~allowed]
    if leak.abs().max() != 0:
        with torch.no_grad():
            unmasked = REF(*args)[1]
        failing.fail(
            failing.caused(
                t("padded_nonzero", name=NAME, max=number(float(leak.abs().max()), ".3g")),
                causes.padding_leak_cause(got["weights"], allowed, unmasked, cfg),
            )
        )
    perturbed = [a.clone() for a in args]
    H = perturbed[1]
    H[~kwargs["mask"]] += tensors.randn(H[~kwargs["mask"]].shape, 1301, scale=5.0)
    again = calls.outputs(calls.call(sub, NAME, perturbed, kwargs).value, NAME, OUT)
    value_checks.assert_close(
        again["context"],
        got["context"],
        t("context_after_padded", name=NAME),
        cfg,
    )


def test_fully_masked_rows(sub, cfg):
    B, T_dec, T_enc, d_s, d_h = SIZES[0]
    args, kwargs = drill.inputs(B, T_dec, T_enc, d_s, d_h, seed=1400, lengths=[T_enc, 0])
    got, _ = value_checks.check_runs(sub, cfg, NAME, args, kwargs, REF, OUT, shape_hints=drill.shape_hints(args))
    dead = (~kwargs["mask"].any(-1)).unsqueeze(1).expand(B, T_dec)  # (B, T_dec): every step of the empty row
    with torch.no_grad():
        unmasked, masked = REF(*args)[1], REF(*args, **kwargs)[1]
    value_checks.check_dead_rows(
        calls.describe_call(NAME, args, kwargs),
        got["weights"],
        dead,
        unmasked,
        others=[(got["context"], dead)],
        masked=masked,
        cfg=cfg,
    )


def test_gradients(sub, cfg):
    args, kwargs = drill.inputs(*SIZES[0], seed=1500)
    grads.check_grads(sub, cfg, NAME, args, kwargs, REF, OUT, seed=1510, hints=drill.hints(args, kwargs, cfg))


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    args, kwargs = drill.inputs(*SIZES[2], seed=1600)
    dtypes.check_in_dtype(
        sub,
        cfg,
        NAME,
        args,
        kwargs,
        REF,
        OUT,
        dtype,
        device,
        hints=drill.hints(args, kwargs, cfg),
        shape_hints=drill.shape_hints(args),
    )


@pytest.mark.property
def test_meta_device(sub, cfg):
    args, kwargs = drill.inputs(*SIZES[0], seed=1700)
    value_checks.check_runs(sub, cfg, NAME, args, kwargs, REF, OUT, dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args, kwargs = drill.inputs(*SIZES[0], seed=1800)
    value_checks.check_runs(sub, cfg, NAME, args, kwargs, REF, OUT, shape_hints=drill.shape_hints(args))
    properties.check_inputs_unchanged(sub, NAME, args, kwargs)


@pytest.mark.property
def test_vectorised(sub, cfg):
    B, T_dec, T_enc, d_s, d_h = SIZES[0]
    args, kwargs = drill.inputs(B, T_dec, T_enc, d_s, d_h, seed=1900)
    value_checks.check_runs(sub, cfg, NAME, args, kwargs, REF, OUT, shape_hints=drill.shape_hints(args))
    for grow, make, sizes in (
        ("batch", lambda b: drill.inputs(b, T_dec, T_enc, d_s, d_h, seed=1910), (2, 4, 6)),
        ("query_length", lambda n: drill.inputs(B, n, T_enc, d_s, d_h, seed=1910), (2, 4, 7)),
        ("sequence_length", lambda m: drill.inputs(B, T_dec, m, d_s, d_h, seed=1910), (3, 6, 9)),
    ):
        properties.check_vectorised(sub, NAME, make, sizes, grow)

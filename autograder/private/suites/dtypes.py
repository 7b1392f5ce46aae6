"""The dtype-and-device property: outputs keep the inputs' dtype and device, stay finite,
and are as close to the reference as the dtype allows.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.suites import calls, compare, counterexamples, failing, tensors, value_checks
from autograder.protocol import wire


def check_in_dtype(
    sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, *, hints=None, shape_hints=None, **opts
):
    """The dtype-and-device property: the outputs keep the inputs' dtype and
    device, hold no NaN or inf where the reference does not, and, when the
    function is right in float64, are as close to the reference as `dtype`
    allows (the reference computed in float64 from the same rounded inputs).
    A function already wrong in float64 is the values check's finding, not
    charged again here."""
    got, expected = value_checks.check_runs(
        sub, cfg, name, args, kwargs, ref_fn, out_names, dtype=dtype, device=device, shape_hints=shape_hints, **opts
    )
    if str(device) == "meta":
        return got
    rounded_args, rounded_kwargs = tensors.to(args, "cpu", dtype), tensors.to(kwargs or {}, "cpu", dtype)
    expected = calls.reference_outputs(ref_fn, rounded_args, rounded_kwargs, out_names)

    def right_in_float64():
        try:
            return compare.close_enough(
                *value_checks.check_runs(sub, cfg, name, args, kwargs, ref_fn, out_names, **opts), cfg
            )
        except pytest.fail.Exception as exc:
            exc.counterexample = None  # a failure in float64, not in `dtype`: nothing to search for here
            raise

    with counterexamples.counterexample_on_failure(
        sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts
    ):
        judge_in_dtype(
            got,
            expected,
            right_in_float64,
            calls.describe_call(name, tensors.to(args, device, dtype), tensors.to(kwargs or {}, device, dtype)),
            cfg,
            dtype,
            device,
            hints,
            "cause_constant_overflow_exp",
        )
    return got


def judge_in_dtype(got, expected, right_in_float64, what, cfg, dtype, device, hints, overflow_cause):
    """What the dtype check judges once the outputs came back (shapes, dtype and device
    already checked): no NaN or inf where the reference (`expected`, from the same
    rounded inputs) has numbers; then, off float64 on the CPU, the values, when
    `right_in_float64()` says the function is right there."""
    for n, exp in expected.items():
        bad = ~torch.isfinite(got[n].detach().double().cpu()) & torch.isfinite(exp)
        if bad.any():
            failing.fail(
                failing.caused(
                    t("nonfinite_in_dtype", what=f"{what} -> {n}", n=int(bad.sum()), dtype=wire.dtype_name(dtype)),
                    Msg(overflow_cause),
                ),
                compared="dtype",
            )
    if dtype == torch.float64 and str(device) == "cpu":
        return
    if right_in_float64():  # wrong in float64: the values checks' finding, not charged again here
        value_checks.check_outputs(got, expected, what, cfg, dtype, device, hints, compared="dtype")

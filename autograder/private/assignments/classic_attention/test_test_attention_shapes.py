"""Hidden tests: test_attention_shapes, the student's regression test for the shape bug.

The student's `test_attention_shapes(attention)` builds its own inputs, calls
`attention(...)` and asserts. It is called in the worker with `attention` a
stand-in the judge answers (`autograder.judge.proxies`): with the reference
(it must pass), with the provided broken function and with the hidden
variants of `drill.VARIANTS` (it must fail), whose code stays here, and with
the reference again (it must still pass). Each run is made in a worker of its
own, the notebook loaded afresh (`run_test`): what one run leaves (a
module-level list, an attribute, torch's RNG, a file) never reaches another.
The hidden variants never raise where the reference runs; the provided one
raises when d_s != d_h. A failure counts as a catch when it is the test's own
assertion (`proxies.failed_by_assertion`), raised after a call the variant
answered, when the inputs the test sent tell that variant's answers from the
reference's (`proxies.exposes`, judged here on the plain inputs the judge
received), and only while the test passes on the reference. The provided
function's crash (on sizes it cannot take, where the reference runs) is a
catch only for a test whose own assertions catch every hidden variant
(`crash_is_a_catch`); any other crash (the test's own code on outputs it
could not use), a test that fails whatever it gets, or one that spots the
stand-in earns nothing. The test is also run with the student's own
`fixed_general_attention` (it must pass), once that function is right on the
values checks of its question.

The two "passes" checks are properties (`@pytest.mark.property`): a test that
catches nothing (no assertion, say) passes them, and they earn at most the
share the catches earn (judge.scoring).

See `proxies` for the gap that remains: the judge sees what the test asked,
not why its assertion failed.
"""

import pytest

from autograder.judge import proxies
from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.assignments.classic_attention import drill
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import calls, compare, failing

QUESTION = "test_attention_shapes"
NAME = "test_attention_shapes"
FIXED = "fixed_general_attention"
REF = ref.fixed_general_attention


# The order of the runs: the correct function first and last, the broken ones between. Each run
# loads the notebook afresh, so this order cannot matter to a test that keeps nothing; the last
# run makes a test that passes on a correct function only before it has seen the broken ones
# fail on it, should anything ever carry between runs.
AFTER = "reference_after"


def run_test(sub, cfg, options):
    """The one place the student's test is run: in a worker of its own (`Remote.call_fresh`),
    so no run sees what another left (module globals, attributes, torch's RNG, files)."""
    return sub.call_fresh(NAME, [], {}, options)


def _run_with(sub, cfg, fn):
    """(reply, recorder): the student's test called with a stand-in the judge answers with `fn`."""
    recorder = proxies.Recorder(fn, cfg.limits.get("reply_bytes"))
    reply = run_test(sub, cfg, CallOptions(call_with=[{"proxy": proxies.NAME}], answer=recorder))
    return reply, recorder


def runs(sub, cfg):
    """{key: (reply, recorder)}, made once per submission: the correct function's run, and
    only when it passes, each variant's and the correct function's again (`AFTER`)."""
    if not hasattr(sub, "_drill_runs"):
        sub._drill_runs = made = {"reference": _run_with(sub, cfg, REF)}
        if made["reference"][0].ok:
            for variant, fn in drill.VARIANTS.items():
                made[variant] = _run_with(sub, cfg, fn)
            made[AFTER] = _run_with(sub, cfg, REF)
    return sub._drill_runs


def passes_reference(sub, cfg):
    """Fails (the check calling it) unless the student's test passes on a correct function,
    before the broken ones and after them."""
    made = runs(sub, cfg)
    reply, recorder = made["reference"]
    if not reply.ok:
        if not recorder.calls:
            failing.fail(
                failing.caused(t("drill_test_failed_reference", error=reply.error), Msg("cause_drill_test_no_call"))
            )
        failing.fail(
            failing.caused(t("drill_test_failed_reference", error=reply.error), Msg("cause_drill_test_too_strict"))
        )
    if not recorder.calls:
        failing.fail(failing.caused(t("drill_test_never_called"), Msg("cause_drill_test_no_call")))
    after, _ = made[AFTER]
    if not after.ok:
        failing.fail(
            failing.caused(
                t("drill_test_failed_reference_after", error=after.error), Msg("cause_drill_test_not_repeatable")
            )
        )


def miss(sub, cfg, variant):
    """Why the student's test did not catch `variant` by its own assertion (a line for the
    student), or None when it did: it failed by its own assertion, after an answer of the
    variant, on inputs where the variant answers otherwise than a correct function."""
    fn = drill.VARIANTS[variant]
    reply, recorder = runs(sub, cfg)[variant]
    what_key, miss_key = drill.ABOUT[variant]
    what = t(what_key)
    tolerances = cfg.data["tolerances"]
    if reply.ok:  # missed: its sizes let the bug fit (the variant's advice), or it did not look at what showed it
        shows = proxies.exposes(recorder.calls, fn, REF, tolerances, values=False, raising=True)
        return failing.caused(
            t("drill_test_passed_variant", what=what),
            Msg("cause_drill_test_ignores_outputs") if shows else Msg(miss_key),
        )
    if recorder.last_raised or not proxies.failed_by_assertion(reply):
        return failing.caused(
            t("drill_test_crashed_variant", what=what, error=reply.error), Msg("cause_drill_test_crash_not_caught")
        )
    if not proxies.exposes(recorder.calls, fn, REF, tolerances):
        return failing.caused(t("drill_test_failed_unexposed", what=what), Msg("cause_drill_test_fails_anyway"))
    return None


def crash_is_a_catch(sub, cfg, variant):
    """The crash rule, in one place. The provided function's own error, raised on inputs where
    a correct function runs, ends the test as it would in pytest; it counts as a catch for a
    test whose own assertions catch every hidden variant (those never raise: the test has
    shown that it checks outputs). For any other test (no assertion, or one that misses a
    hidden bug) a crash is no catch: any call notices it, even one that checks nothing."""
    if variant != drill.PROVIDED_VARIANT:
        return False
    reply, recorder = runs(sub, cfg)[variant]
    return (
        not reply.ok
        and recorder.last_raised
        and proxies.exposes(recorder.calls, drill.VARIANTS[variant], REF, cfg.data["tolerances"], raising=True)
        and all(miss(sub, cfg, hidden) is None for hidden in drill.HIDDEN_VARIANTS)
    )


def catches(sub, cfg, variant):
    """Fails (the check calling it) unless the student's test catches `variant`: by its own
    assertion (`miss`), or by the provided function's crash where the rule lets it
    (`crash_is_a_catch`); and only while it passes on a correct function."""
    passes_reference(sub, cfg)
    why = miss(sub, cfg, variant)
    if why is not None and not crash_is_a_catch(sub, cfg, variant):
        failing.fail(why)


@pytest.mark.property
def test_passes_a_correct_function(sub, cfg):
    passes_reference(sub, cfg)


def own_fix_is_right(sub, cfg):
    """Whether the student's fixed function gives the reference's outputs on the drill's sizes
    (the values checks of its own question)."""
    for k, size in enumerate(drill.SIZES):
        args, kwargs = drill.inputs(*size, seed=2000 + 10 * k)
        reply = sub.call(FIXED, args, kwargs)
        if not reply.ok:
            return False
        try:
            got = calls.outputs(reply.value, FIXED, drill.OUT)
        except pytest.fail.Exception:
            return False
        expected = calls.reference_outputs(REF, args, kwargs, drill.OUT)
        if not (
            all(tuple(got[n].shape) == tuple(expected[n].shape) for n in drill.OUT)
            and compare.close_enough(got, expected, cfg)
        ):
            return False
    return True


@pytest.mark.property
def test_passes_your_fix(sub, cfg):
    """The test passes on the student's own fixed function, once that is right (while it is
    not, its own question charges it: a bug is charged once, under the question that has it),
    and, like every check here, only counts while the test passes on a correct function."""
    passes_reference(sub, cfg)
    if not own_fix_is_right(sub, cfg):
        return
    reply = run_test(sub, cfg, CallOptions(call_with=[{"own": FIXED}], isolate=["masked_softmax"]))
    if not reply.ok:
        failing.fail(
            failing.caused(
                t("drill_test_failed_own", name=FIXED, error=reply.error), Msg("cause_drill_test_too_strict")
            )
        )


def test_catches_the_provided_bug(sub, cfg):
    catches(sub, cfg, drill.PROVIDED_VARIANT)


@pytest.mark.parametrize("variant", drill.HIDDEN_VARIANTS)
def test_catches_hidden_bugs(sub, cfg, variant):
    catches(sub, cfg, variant)

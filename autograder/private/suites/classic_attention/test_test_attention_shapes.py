"""Hidden tests: test_attention_shapes, the student's regression test for the shape bug.

The student's `test_attention_shapes(attention)` builds its own inputs, calls
`attention(...)` and asserts. It is called in the worker with `attention` a
stand-in the judge answers (`autograder.judge.proxies`): with the reference
(it must pass), with the provided broken function and with the hidden
variants of `drill.VARIANTS` (it must fail), whose code stays here. A failure
counts as a catch only when the inputs the test sent tell that variant from
the reference (`proxies.exposes`, judged here on the plain inputs the judge
received), and only while the test passes on the reference: a test that
fails whatever it gets, or that spots the stand-in, earns nothing. The test
is also run with the student's own `fixed_general_attention` (it must pass),
once that function is right on the values checks of its question.

See `proxies` for the gap that remains: the judge sees what the test asked,
not why it failed.
"""
import pytest

from autograder.judge import proxies
from autograder.messages import t
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import checks as c
from autograder.private.suites.classic_attention import drill

QUESTION = "test_attention_shapes"
NAME = "test_attention_shapes"
FIXED = "fixed_general_attention"
REF = ref.fixed_general_attention


def _cache(sub):
    """Runs of the student's test already made for this submission: {key: (reply, recorder)}."""
    if not hasattr(sub, "_drill_runs"):
        sub._drill_runs = {}
    return sub._drill_runs


def run_with(sub, cfg, key, fn):
    """(reply, recorder): the student's test called with a stand-in the judge answers with `fn`."""
    runs = _cache(sub)
    if key not in runs:
        recorder = proxies.Recorder(fn, cfg.limits.get("reply_bytes"))
        reply = sub.call(NAME, [], {}, call_with=[{"proxy": proxies.NAME}], answer=recorder)
        runs[key] = (reply, recorder)
    return runs[key]


def passes_reference(sub, cfg):
    """Fails (the check calling it) unless the student's test passes on a correct function."""
    reply, recorder = run_with(sub, cfg, "reference", REF)
    if not reply.ok:
        if not recorder.calls:
            c.fail(c.caused(t("drill_test_failed_reference", error=reply.error), t("cause_drill_test_no_call")))
        c.fail(c.caused(t("drill_test_failed_reference", error=reply.error), t("cause_drill_test_too_strict")))
    if not recorder.calls:
        c.fail(c.caused(t("drill_test_never_called"), t("cause_drill_test_no_call")))


def catches(sub, cfg, variant):
    """The student's test fails on `variant`, on inputs that expose it."""
    passes_reference(sub, cfg)
    fn = drill.VARIANTS[variant]
    reply, recorder = run_with(sub, cfg, variant, fn)
    what_key, miss_key = drill.ABOUT[variant]
    what = t(what_key)
    exposed = proxies.exposes(recorder.calls, fn, REF, cfg.data["tolerances"])
    if reply.ok:  # missed: its sizes let the bug fit (the variant's advice), or it did not look at what showed it
        shows = proxies.exposes(recorder.calls, fn, REF, cfg.data["tolerances"], values=False)
        c.fail(c.caused(t("drill_test_passed_variant", what=what),
                        t("cause_drill_test_ignores_outputs") if shows else t(miss_key)))
    if not exposed:
        c.fail(c.caused(t("drill_test_failed_unexposed", what=what), t("cause_drill_test_fails_anyway")))


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
            got = c.outputs(reply.value, FIXED, drill.OUT)
        except pytest.fail.Exception:
            return False
        expected = c.reference_outputs(REF, args, kwargs, drill.OUT)
        if not (all(tuple(got[n].shape) == tuple(expected[n].shape) for n in drill.OUT)
                and c.close_enough(got, expected, cfg)):
            return False
    return True


def test_passes_your_fix(sub, cfg):
    """The test passes on the student's own fixed function, once that is right (while it is
    not, its own question charges it: a bug is charged once, under the question that has it),
    and, like every check here, only counts while the test passes on a correct function."""
    passes_reference(sub, cfg)
    if not own_fix_is_right(sub, cfg):
        return
    reply = sub.call(NAME, [], {}, call_with=[{"own": FIXED}], isolate=["masked_softmax"])
    if not reply.ok:
        c.fail(c.caused(t("drill_test_failed_own", name=FIXED, error=reply.error), t("cause_drill_test_too_strict")))


def test_catches_the_provided_bug(sub, cfg):
    catches(sub, cfg, drill.PROVIDED_VARIANT)


@pytest.mark.parametrize("variant", drill.HIDDEN_VARIANTS)
def test_catches_hidden_bugs(sub, cfg, variant):
    catches(sub, cfg, variant)

"""Hidden tests: shapes_drill, what is wrong with the provided `broken_general_attention`.

The student types three words into the drill's answer cell (`wrong_tensor`,
`right_shape`, `fix`); the reader reads them without running anything
(`Submission.typed["shapes_drill"]`, `judge.by_hand`, the form in this folder's `TYPED`), so no call
reaches the worker here. Each answer is its own check against solutions'
BY_HAND, so a right fix earns its part even when the tensor is misnamed. A
failure names the likely cause from the answer given (the tensor the line
makes instead of the one that enters it, the shape the tensor already has, a
reshape that only makes sizes fit), never the expected words.
"""

from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.solutions import classic_attention as ref
from autograder.private.suites import failing, typed

QUESTION = "shapes_drill"
ANSWER = ref.BY_HAND[QUESTION]


def answers(sub):
    """{target: word, list of words or None} as the reader read the drill's cell; fails when
    there is no such cell or it breaks the cell's rule."""
    return typed.typed_answers(
        (getattr(sub.submission, "typed", None) or {}).get(QUESTION),
        "drill_missing",
        "cause_drill_missing",
        "drill_unreadable",
        "cause_drill_rule",
    )


def given(sub, name):
    """The student's answer for `name`; fails when it is still `...`."""
    value = answers(sub)[name]
    if value is None:
        failing.fail_form(t("drill_not_answered", name=name))
    return value


def _tensor_cause(got):
    if got == "projected":
        return Msg("cause_drill_tensor_made")
    if got in ("decoder_states", "encoder_states", "mask"):
        return Msg("cause_drill_tensor_fits", name=got)
    return Msg("cause_drill_tensor_later", name=got)


def _shape_cause(sub, got):
    if "batch_size" in got and ANSWER["wrong_tensor"] == "W":
        return Msg("cause_drill_shape_batch")
    if sorted(got) == sorted(ANSWER["right_shape"]):
        return Msg("cause_drill_shape_as_it_is")
    return Msg("cause_drill_shape_other")


def _fix_cause(got):
    return (
        Msg("cause_drill_fix_reshape")
        if got == "reshape"
        else Msg("cause_drill_fix_project")
        if got == "project"
        else Msg("cause_drill_fix_other")
    )


def test_wrong_tensor(sub, cfg):
    """The tensor whose shape does not fit the operation it enters."""
    got = given(sub, "wrong_tensor")
    if got != ANSWER["wrong_tensor"]:
        failing.fail(failing.caused(t("drill_wrong_tensor", got=got), _tensor_cause(got)))


def test_right_shape(sub, cfg):
    """The shape that operation needs, in the contract's size names, in order."""
    got = list(given(sub, "right_shape"))
    if got != list(ANSWER["right_shape"]):
        failing.fail(failing.caused(t("drill_wrong_shape", got="(" + ", ".join(got) + ")"), _shape_cause(sub, got)))


def test_fix(sub, cfg):
    """The kind of one-line fix: one that changes which axis meets which, not one that hides it."""
    got = given(sub, "fix")
    if got != ANSWER["fix"]:
        failing.fail(failing.caused(t("drill_wrong_fix", got=got), _fix_cause(got)))

"""Hostile battery cases of this assignment (its folder's battery): classic_attention's shapes drill.

Registered into `cases.CASES` on import. Two surfaces: the drill's answer cell,
read as words without running it (`autograder.judge.by_hand`, its form this folder's `TYPED`: code,
names, unknown words, a huge string, terminal escapes, a missing cell each cost
`shapes_drill` only, with a one-line reason), and the student's regression
test, called with a stand-in the judge answers (`autograder.judge.proxies`):
a test that detects the stand-in, floods it with calls, sends it a huge tensor
or something that is not a tensor earns nothing on `test_attention_shapes`
and costs no other question anything.
"""

from autograder.audit.hostile.cases import case, ipynb, others_of, reference, replace_function
from autograder.private.assignments.classic_attention import TYPED
from autograder.private.assignments.classic_attention.battery_cases import (
    CLASSIC,
    CLASSIC_FULL,
    CLASSIC_POINTS,
    CLASSIC_QS,
)

DRILL = "shapes_drill"
DRILL_TAG = TYPED[DRILL]["tag"]
TEST = "test_attention_shapes"


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _cell(nb):
    return next(
        c
        for c in nb["cells"]
        if c.get("cell_type") == "code" and DRILL_TAG in (c.get("metadata") or {}).get("tags", [])
    )


def drill_lines(lines):
    """The reference notebook with the drill cell's lines (under its comments) replaced."""
    nb = reference(CLASSIC)
    cell = _cell(nb)
    comments = [line for line in _src(cell).split("\n") if line.startswith("#")]
    cell["source"] = "\n".join(comments + [lines])
    return ipynb(nb)


def loses(question):
    return {
        "max_score": CLASSIC_FULL - CLASSIC_POINTS[question],
        "questions_zero": [question],
        "questions_keep_full": others_of(CLASSIC_QS, question),
    }


def with_test(body):
    """The reference notebook with `test_attention_shapes` replaced by `body` (its lines after the def)."""
    return ipynb(
        replace_function(reference(CLASSIC, demo=False), TEST, "def test_attention_shapes(attention):\n" + body)
    )


REST = 'right_shape = ("d_h", "d_s")\nfix = "transpose"'


@case(
    "drill_code_in_cell",
    "the drill cell imports os (a statement, not an assignment of words)",
    assignment=CLASSIC,
    reason_contains=["is not an assignment"],
    **loses(DRILL),
)
def _():
    return drill_lines("import os\n" + REST)


@case(
    "drill_call_in_answer",
    "wrong_tensor = __import__('os').getcwd() (a call the worker runs harmlessly)",
    assignment=CLASSIC,
    reason_contains=["calls a function"],
    **loses(DRILL),
)
def _():
    return drill_lines("wrong_tensor = __import__('os').getcwd()\n" + REST)


@case(
    "drill_bare_name",
    "wrong_tensor = W, the provided function's name unquoted",
    assignment=CLASSIC,
    reason_contains=["in quotes"],
    **loses(DRILL),
)
def _():
    return drill_lines("wrong_tensor = W\n" + REST)


@case(
    "drill_escape_word",
    "wrong_tensor holds a word with terminal escapes and a Markdown heading",
    assignment=CLASSIC,
    reason_contains=["is not one of the words"],
    must_not_contain=["\x1b[31m", "\n# owned"],
    **loses(DRILL),
)
def _():
    return drill_lines('wrong_tensor = "W\\x1b[31m\\n# owned"\n' + REST)


@case(
    "drill_huge_string",
    "wrong_tensor is a 2 MB string",
    assignment=CLASSIC,
    reason_contains=["over the limit of"],
    **loses(DRILL),
)
def _():
    return drill_lines('wrong_tensor = "' + "W" * 2_000_000 + '"\n' + REST)


@case(
    "drill_missing_cell",
    "the drill cell deleted",
    assignment=CLASSIC,
    reason_contains=["no answer cell of the shapes drill"],
    **loses(DRILL),
)
def _():
    nb = reference(CLASSIC)
    nb["cells"].remove(_cell(nb))
    return ipynb(nb)


@case(
    "drill_test_detects_stand_in",
    "the regression test fails whenever its argument is the grader's stand-in (its name), and passes otherwise",
    assignment=CLASSIC,
    reason_contains=["failed on a correct attention function"],
    **loses(TEST),
)
def _():
    return with_test("    assert getattr(attention, '__name__', '') != 'attention', 'a stand-in'\n")


@case(
    "drill_test_floods_stand_in",
    "the regression test calls its stand-in 100 000 times",
    assignment=CLASSIC,
    reason_contains=["calls to graded functions or classes in one call"],
    **loses(TEST),
)
def _():
    return with_test(
        "    for _ in range(100_000):\n"
        "        attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))\n"
    )


@case(
    "drill_test_huge_tensor", "the regression test sends its stand-in a 64 MB tensor", assignment=CLASSIC, **loses(TEST)
)
def _():
    return with_test(
        "    context, weights = attention(torch.randn(1, 1, 4), torch.randn(1, 2_000_000, 4, dtype=torch.float64),\n"
        "                                 torch.randn(4, 4))\n"
        "    assert context.shape == (1, 1, 4)\n"
    )


@case(
    "drill_test_passes_objects",
    "the regression test passes its stand-in a function and a dict instead of tensors",
    assignment=CLASSIC,
    **loses(TEST),
)
def _():
    return with_test("    attention(lambda: 0, {'a': 1}, torch.randn(4, 6))\n")


@case(
    "drill_test_asserts_nothing",
    "the regression test calls its stand-in once on sizes that are all different and "
    "asserts nothing (the provided function crashes there: a crash is no catch)",
    assignment=CLASSIC,
    reason_contains=["with an error, not with one of its own assertions"],
    **loses(TEST),
)
def _():
    return with_test("    attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))\n")


@case(
    "drill_test_asserts_on_the_crash",
    "the regression test turns its stand-in's error into an assertion "
    "(try/except, assert False) and looks at no output",
    assignment=CLASSIC,
    reason_contains=["with an error, not with one of its own assertions"],
    **loses(TEST),
)
def _():
    return with_test(
        "    try:\n"
        "        attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))\n"
        "    except Exception as exc:\n"
        "        assert False, str(exc)\n"
    )


# A test whose verdict depends on what it saw before: each run of the student's test loads the
# notebook afresh (the suite's `run_test`), so every run is its first and this test catches nothing.
@case(
    "drill_test_with_memory",
    "the regression test keeps a module-level list: it passes on its first run (the correct "
    "function's) and fails by its own assertion on every later one",
    assignment=CLASSIC,
    **loses(TEST),
)
def _():
    return ipynb(
        replace_function(
            reference(CLASSIC, demo=False),
            TEST,
            "_runs = []\n\n\n"
            "def test_attention_shapes(attention):\n"
            "    _runs.append(1)\n"
            "    context, weights = attention(torch.randn(2, 3, 5, dtype=torch.float64),\n"
            "                                 torch.randn(2, 4, 5, dtype=torch.float64),\n"
            "                                 torch.randn(5, 5, dtype=torch.float64))\n"
            "    assert len(_runs) == 1, 'not my first run'\n",
        )
    )


FAIR_TEST = """
    for batch_size, T_dec, T_enc, d_s, d_h in ((2, 3, 5, 4, 6), (3, 3, 5, 4, 4)):
        decoder_states = torch.randn(batch_size, T_dec, d_s, dtype=torch.float64)
        encoder_states = torch.randn(batch_size, T_enc, d_h, dtype=torch.float64)
        W = torch.randn(d_s, d_h, dtype=torch.float64)
        mask = torch.ones(batch_size, T_enc, dtype=torch.bool)
        mask[1, 3:] = False
        context, weights = attention(decoder_states, encoder_states, W, mask)
        assert context.shape == (batch_size, T_dec, d_h)
        assert weights.shape == (batch_size, T_dec, T_enc)
        assert torch.allclose(weights.sum(-1), torch.ones(batch_size, T_dec, dtype=torch.float64))
        scores = torch.einsum("btd,de,bie->bti", decoder_states, W, encoder_states)
        expected = torch.softmax(scores.masked_fill(~mask[:, None, :], float("-inf")), dim=-1)
        assert torch.allclose(weights, expected)
        assert torch.allclose(context, expected @ encoder_states)
"""


@case(
    "drill_fair_test_crash_first",
    "the regression test checks shapes, row sums and the formula's values (einsum), first on sizes "
    "that all differ (the provided function crashes there) then on d_s == d_h, batch_size == T_dec: "
    "its own asserts catch every hidden variant, so the provided function's crash is a catch",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL,
    questions_keep_full=list(CLASSIC_QS),
)
def _():
    return with_test(FAIR_TEST)

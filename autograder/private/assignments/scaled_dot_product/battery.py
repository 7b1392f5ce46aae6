"""Hostile battery cases of this assignment (its folder's battery): the by-hand answer cell of scaled_dot_product.

Registered into `cases.CASES` on import. The reader reads that cell's literal
numbers without running it (`autograder.judge.by_hand`): a cell that breaks
its rule (code, a call, names, strings, NaN or inf, a huge literal, deep
nesting), a missing cell or two marked cells cost the by_hand question only,
with a one-line reason naming the rule; the cell still runs in the worker
like any other, so the functions keep their points. A cell that lost its tag
or its marker line is still found by the other.
"""

from autograder.audit.hostile.cases import case, ipynb, reference, replace_function
from autograder.judge import by_hand
from autograder.private.assignments.scaled_dot_product.battery_cases import FULL, SDP_QS

OTHERS = [q for q in SDP_QS if q != by_hand.QUESTION]
LOSES = {"max_score": FULL - 2, "questions_zero": [by_hand.QUESTION], "questions_keep_full": OTHERS}


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _cell(nb):
    """The reference notebook's by-hand cell."""
    return next(
        c
        for c in nb["cells"]
        if c.get("cell_type") == "code" and by_hand.TAG in (c.get("metadata") or {}).get("tags", [])
    )


def with_lines(lines):
    """The reference notebook with the by-hand cell's lines (under its comments) replaced."""
    nb = reference()
    cell = _cell(nb)
    comments = [line for line in _src(cell).split("\n") if line.startswith("#")]
    cell["source"] = "\n".join(comments + [lines])
    return ipynb(nb)


RIGHT = "weights = [0.0454, 0.7679, 0.1867]\noutput = [3.1171, 0.4188]"


@case(
    "by_hand_code_in_cell",
    "the by-hand cell imports os and computes its scores with math.sqrt",
    reason_contains=["is not an assignment"],
    **LOSES,
)
def _():
    return with_lines("import os\nscores = [0, 4 / math.sqrt(2), 2 / math.sqrt(2)]\n" + RIGHT)


@case(
    "by_hand_import_call",
    "a score is __import__('os').getpid() (a call the worker runs harmlessly)",
    reason_contains=["calls a function"],
    **LOSES,
)
def _():
    return with_lines("scores = [__import__('os').getpid(), 2.8284, 1.4142]\n" + RIGHT)


@case(
    "by_hand_huge_literal",
    "the by-hand cell holds a list literal of 200 000 numbers (1.2 MB)",
    reason_contains=["over the limit of"],
    **LOSES,
)
def _():
    return with_lines("scores = [" + "0.0, " * 200_000 + "1.4142]\n" + RIGHT)


@case("by_hand_deep_nesting", "the scores are nested 150 lists deep", reason_contains=["levels deep"], **LOSES)
def _():
    return with_lines("scores = " + "[" * 150 + "0" + "]" * 150 + "\n" + RIGHT)


@case(
    "by_hand_nesting_past_parser",
    "the scores are nested 1000 lists deep (past Python's parser: the cell fails in the worker too, alone)",
    reason_contains=["not valid Python"],
    **LOSES,
)
def _():
    return with_lines("scores = " + "[" * 1000 + "0" + "]" * 1000 + "\n" + RIGHT)


@case("by_hand_nan_call", "a score written float('nan')", reason_contains=["calls a function"], **LOSES)
def _():
    return with_lines("scores = [float('nan'), 2.8284, 1.4142]\n" + RIGHT)


@case(
    "by_hand_inf_literal",
    "a weight written 1e999 (inf as a literal)",
    reason_contains=["too large to be finite"],
    **LOSES,
)
def _():
    return with_lines("scores = [0.0, 2.8284, 1.4142]\nweights = [1e999, 0.7679, 0.1867]\noutput = [3.1171, 0.4188]")


@case("by_hand_strings", "the scores typed as strings", reason_contains=["holds text"], **LOSES)
def _():
    return with_lines("scores = ['0', '2.8284', '1.4142']\n" + RIGHT)


@case(
    "by_hand_other_name",
    "the by-hand cell also assigns a name of its own",
    reason_contains=["may be assigned"],
    **LOSES,
)
def _():
    return with_lines("answer = 42\nscores = [0.0, 2.8284, 1.4142]\n" + RIGHT)


@case("by_hand_missing_cell", "the by-hand cell deleted", reason_contains=["no by-hand answer cell"], **LOSES)
def _():
    nb = reference()
    nb["cells"].remove(_cell(nb))
    return ipynb(nb)


@case(
    "by_hand_two_cells",
    "the by-hand cell duplicated (two marked cells)",
    reason_contains=["2 cells are marked"],
    **LOSES,
)
def _():
    nb = reference()
    cell = _cell(nb)
    nb["cells"].insert(nb["cells"].index(cell) + 1, dict(cell))
    return ipynb(nb)


@case(
    "by_hand_tag_removed",
    "the by-hand cell's tag removed (its marker line still finds it)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    _cell(nb)["metadata"] = {}
    return ipynb(nb)


@case(
    "by_hand_marker_removed",
    "the by-hand cell's comment lines removed (its tag still finds it)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    cell = _cell(nb)
    cell["source"] = "\n".join(line for line in _src(cell).split("\n") if not line.startswith("#"))
    return ipynb(nb)


@case(
    "random_generators_replaced",
    "honest code whose causal_mask cell also replaces the random generators' getters and "
    "setters (random, torch, numpy): the worker reads and restores their states with its own, "
    "so the load (which would skip that cell, and causal_mask with it), the graded calls and "
    "the public checks all still run",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(
        replace_function(
            reference(),
            "causal_mask",
            (
                "import random, numpy\n"
                "random.getstate = random.setstate = None\n"
                "torch.get_rng_state = torch.set_rng_state = None\n"
                "numpy.random.get_state = numpy.random.set_state = None\n"
                "\n"
                "def causal_mask(seq_len, device=None):\n"
                "    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()\n"
            ),
        )
    )

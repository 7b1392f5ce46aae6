"""The by_hand question: attention for one query computed by hand, typed into a
cell of literal numbers that the judge reads without running it.

The reader's rule for that cell (real reader, in process and through its
limited helper), the judge's shape check of what the helper sends, the
notebook's instance against solutions' BY_HAND in both editions, the catalog's
filling of the cell, and the hidden suite's verdicts through the real judge:
partial credit for a student whose steps follow from wrong scores, and the
step that went wrong named.
"""

import json
import re

import pytest

from autograder import config
from autograder.audit.catalog import entries, fill, fill_reference, reference_by_hand, reference_sources
from autograder.judge import by_hand
from autograder.judge.reader import SubmissionError, _submission_dict, read_bytes, read_file
from autograder.private.solutions import scaled_dot_product as sdp
from conftest import EDITIONS, ROOT, grade, template
from conftest import code_cell as _code
from conftest import notebook as _nb

CFG = config.load(ROOT / "grading.yml")
SDP = "scaled_dot_product"
LIMITS = CFG.limits
RIGHT = "scores = [0.0, 2.8284, 1.4142]\nweights = [0.0454, 0.7679, 0.1867]\noutput = [3.1171, 0.4188]"


def _read(nb):
    return read_bytes(json.dumps(nb).encode(), "hw.ipynb", LIMITS)


# -- the cell's rule ------------------------------------------------------------------
def test_a_marked_cell_is_read_as_numbers_and_counts_as_the_question_for_detection():
    result = _read(
        _nb(
            _code("def causal_mask(T, device=None):\n    pass\n"),
            _code("# kit-by-hand: numbers only\n" + RIGHT.replace("output = [3.1171, 0.4188]", "output = [[3, -0.5]]")),
        )
    )
    bh = result["by_hand"]
    assert bh["cells"] == [2] and bh["problem"] is None
    assert bh["answers"] == {
        "scores": [0.0, 2.8284, 1.4142],
        "weights": [0.0454, 0.7679, 0.1867],
        "output": [[3.0, -0.5]],
    }
    assert "by_hand" in result["defined"] and "causal_mask" in result["defined"]


def test_the_tag_alone_or_the_marker_alone_finds_the_cell_and_a_provided_cell_never_is_it():
    assert _read(_nb(_code(RIGHT, ["kit-by-hand"])))["by_hand"]["answers"]["scores"] == [0.0, 2.8284, 1.4142]
    assert _read(_nb(_code("x = 1\n  # kit-by-hand\n" + RIGHT)))["by_hand"]["problem"]["key"] == "by_hand_target"
    assert _read(_nb(_code("# PROVIDED: x\n# kit-by-hand\n" + RIGHT)))["by_hand"] is None
    assert _read(_nb(_code(RIGHT)))["by_hand"] is None
    assert "by_hand" not in _read(_nb(_code(RIGHT)))["defined"]


def test_dots_mean_not_answered_and_a_missing_name_too():
    bh = _read(_nb(_code("# kit-by-hand\nscores = [..., ..., ...]\nweights = ...\n")))["by_hand"]
    assert bh["answers"] == {"scores": [None, None, None], "weights": None, "output": None}


@pytest.mark.parametrize(
    "text,key,fields",
    [
        ("import os", "by_hand_statement", {"line": 2}),
        ("print(1)", "by_hand_call", {"line": 2}),
        ("scores = [__import__('os').getpid(), 1, 2]", "by_hand_call", {"line": 2}),
        ("scores = [float('nan'), 1, 2]", "by_hand_call", {"line": 2}),
        ("scores = [1e999, 1, 2]", "by_hand_not_finite", {"line": 2}),
        ("scores = [-1e999]", "by_hand_not_finite", {"line": 2}),
        ("scores = [math.pi]", "by_hand_name", {"line": 2, "name": "pi"}),
        ("scores = [x, 1, 2]", "by_hand_name", {"line": 2, "name": "x"}),
        ("scores = [1 / 3, 1, 2]", "by_hand_operator", {"line": 2}),
        ("scores = [--1]", "by_hand_operator", {"line": 2}),
        ("scores = ['0', '1', '2']", "by_hand_string", {"line": 2}),
        ("scores = [True, 1, 2]", "by_hand_not_number", {"line": 2}),
        ("scores = [1j]", "by_hand_not_number", {"line": 2}),
        ("scores = {'a': 1}", "by_hand_not_number", {"line": 2}),
        ("scores = [[[0]]]", "by_hand_too_deep", {"line": 2, "depth": 2}),
        ("scores = [" + "[" * 150 + "0" + "]" * 150 + "]", "by_hand_too_deep", {"line": 2, "depth": 2}),
        ("scores = " + "[" * 1000 + "]" * 1000, "by_hand_syntax", {"line": 2}),
        ("scores = [0] * 3", "by_hand_operator", {"line": 2}),
        ("scores = list(range(40))", "by_hand_call", {"line": 2}),
        ("scores = " + str(list(range(40))), "by_hand_too_many", {"line": 2, "n": 40, "limit": 16}),
        ("scores = [" + "0.0, " * 2000 + "]", "by_hand_too_big", {"limit": 4000}),
        ("answer = 42", "by_hand_target", {"line": 2, "name": "answer"}),
        ("scores = [1]\nscores = [2]", "by_hand_twice", {"line": 3, "name": "scores"}),
        ("scores = weights = [1]", "by_hand_statement", {"line": 2}),
        ("scores, weights = [1], [2]", "by_hand_statement", {"line": 2}),
        ("scores: list = [1]", "by_hand_statement", {"line": 2}),
        ("scores = [1,", "by_hand_syntax", {}),
        ("%time scores = [1]", "by_hand_syntax", {}),
    ],
)
def test_anything_but_literal_numbers_makes_the_answer_unreadable_naming_the_rule(text, key, fields):
    bh = _read(_nb(_code("# kit-by-hand\n" + text)))["by_hand"]
    assert bh["answers"] is None and bh["problem"]["key"] == key, bh["problem"]
    assert fields.items() <= bh["problem"]["fields"].items()
    from autograder.messages import t

    line = t(key, "en", **bh["problem"]["fields"])  # a one-line reason, in both languages
    assert "\n" not in line and line == line.strip() and t(key, "pt-BR", **bh["problem"]["fields"])


def test_two_marked_cells_are_refused_and_counted():
    cells = [_code("# kit-by-hand\n" + RIGHT) for _ in range(30)]
    bh = _read(_nb(*cells))["by_hand"]
    assert bh["problem"] == {"key": "by_hand_two_cells", "fields": {"n": 30}}
    assert len(bh["cells"]) == by_hand.MAX_LISTED


def test_the_helper_sends_it_back_and_the_judge_checks_its_shape(tmp_path):
    path = tmp_path / "hw.ipynb"
    path.write_text(json.dumps(_nb(_code("# kit-by-hand\n" + RIGHT))))
    got = read_file(path, [SDP], limits=LIMITS)  # the limited helper process, then _submission_dict
    assert got["by_hand"]["answers"]["output"] == [3.1171, 0.4188]
    good = _read(_nb(_code("# kit-by-hand\n" + RIGHT)))
    forged = [
        {
            "cells": [1],
            "labels": [None],
            "answers": {"scores": [float("nan")], "weights": None, "output": None},
            "problem": None,
        },
        {
            "cells": [1],
            "labels": [None],
            "answers": {"scores": [True], "weights": None, "output": None},
            "problem": None,
        },
        {
            "cells": [1],
            "labels": [None],
            "answers": {"scores": [[[1.0]]], "weights": None, "output": None},
            "problem": None,
        },
        {
            "cells": [1],
            "labels": [None],
            "answers": {"scores": [0.0] * 17, "weights": None, "output": None},
            "problem": None,
        },
        {"cells": [1], "labels": [None], "answers": {"scores": "1", "weights": None, "output": None}, "problem": None},
        {"cells": [1], "labels": [None], "answers": {"x": None}, "problem": None},
        {"cells": [1], "labels": [None], "answers": None, "problem": {"key": "json_invalid", "fields": {}}},
        {"cells": [1], "labels": [None], "answers": None, "problem": {"key": "by_hand_nope", "fields": {}}},
        {"cells": [1], "labels": [None], "answers": None, "problem": {"key": "by_hand_call", "fields": {"line": []}}},
        {"cells": [1], "labels": [None], "answers": None, "problem": None},
        {"cells": [], "labels": [], "answers": None, "problem": {"key": "by_hand_call", "fields": {}}},
        {"cells": [True], "labels": [None], "answers": None, "problem": {"key": "by_hand_call", "fields": {}}},
        "by hand",
    ]
    for bad in forged:
        with pytest.raises(SubmissionError, match="by-hand answer"):
            _submission_dict({**good, "by_hand": bad}, "hw.ipynb")
    assert _submission_dict({**good, "by_hand": None}, "hw.ipynb")["by_hand"] is None


# -- the notebook ---------------------------------------------------------------------------
def _cells(nb):
    return [("".join(c["source"]) if isinstance(c["source"], list) else c["source"], c) for c in nb["cells"]]


@pytest.mark.parametrize("lang", EDITIONS)
def test_each_edition_shows_the_instance_the_judge_grades_and_a_cell_it_can_read(lang):
    nb = template(SDP, lang)
    spec = sdp.BY_HAND["by_hand"]
    # the sentence in the edition's language ("the cat sleeps", "o gato dorme"): the same keys and numbers
    words = {"en": ("the", "cat", "sleeps"), "pt-BR": ("o", "gato", "dorme")}[lang]
    intro = next(src for src, c in _cells(nb) if c["cell_type"] == "markdown" and f"| {words[0]} | $(0, 0)$" in src)
    rows = re.findall(rf"^\| ({'|'.join(words)}) \| \$\(([^)]*)\)\$ \| \$\(([^)]*)\)\$ \|$", intro, re.M)
    assert [w for w, _, _ in rows] == list(words) and f'**"{" ".join(words)}"**' in intro
    assert [[float(x) for x in k.split(",")] for _, k, _ in rows] == spec["key"]
    assert [[float(x) for x in v.split(",")] for _, _, v in rows] == spec["value"]
    q = ", ".join(f"{x:g}" for x in spec["query"][0])
    assert f"$q = ({q})$" in intro and "d_k = 2" in intro
    marked = [
        (src, c)
        for src, c in _cells(nb)
        if c["cell_type"] == "code" and by_hand.is_marked(src, c["metadata"].get("tags", []))
    ]
    assert len(marked) == 1 and by_hand.TAG in marked[0][1]["metadata"]["tags"]
    assert marked[0][0].startswith(by_hand.MARK)
    assert by_hand.parse_cell(marked[0][0]) == {"scores": [None] * 3, "weights": [None] * 3, "output": [None] * 2}
    intuition = [
        src
        for src, c in _cells(nb)
        if c["cell_type"] == "markdown"
        and ("not graded automatically" in src or "não é corrigida automaticamente" in src)
    ]
    assert len(intuition) == 1


def test_the_reference_fills_the_cell_with_numbers_the_suite_accepts_and_entries_carry_their_own():
    nb = fill_reference(template(SDP), SDP)
    src = next(s for s, c in _cells(nb) if by_hand.TAG in c["metadata"].get("tags", []))
    answers = by_hand.parse_cell(src)
    assert answers["weights"] == [0.0454, 0.7679, 0.1867] and src.startswith(by_hand.MARK)
    assert reference_by_hand("classic_attention") is None
    mine = [e for e in entries(SDP) if e.by_hand is not None]
    assert sum(not e.correct for e in mine) >= 8 and sum(e.correct for e in mine) >= 2
    assert all("by_hand" in e.functions and e.questions == ([] if e.correct else ["by_hand"]) for e in mine)
    with pytest.raises(ValueError, match="kit-by-hand"):
        fill({"cells": []}, {}, "scores = [1]")
    assert set(reference_sources(SDP)) == {"causal_mask", "padding_mask", "scaled_dot_product_attention"}


# -- the hidden suite, through the real judge -------------------------------------------------
def _graded(tmp_path, lines, lang="en"):
    nb = fill(template(SDP), reference_sources(SDP), lines)
    path = tmp_path / "hw.ipynb"
    path.write_text(json.dumps(nb))
    return grade(path, cfg=CFG, lang=lang, pytest_args=("-k", "test_by_hand"))


@pytest.mark.slow
def test_wrong_scores_with_steps_that_follow_earn_partial_credit_and_name_the_step(tmp_path):
    result = _graded(tmp_path, "scores = [0, 4, 2]\nweights = [0.0159, 0.8668, 0.1173]\noutput = [3.4831, 0.2505]")
    q = result.questions["by_hand"]
    points = CFG.questions(SDP)["by_hand"]
    assert q.score == pytest.approx(points * 2 / 5), q.lines
    text = "\n".join(q.lines)
    assert "not divided by sqrt(d_k)" in text and "weights follow your scores" not in text.split("\n")[0]
    for number in ("2.828", "1.414", "0.767", "0.186", "3.117", "0.418"):  # the expected numbers never shown
        assert number not in text, text


@pytest.mark.slow
def test_the_reference_earns_full_marks_and_an_unreadable_cell_nothing_in_both_languages(tmp_path):
    full = _graded(tmp_path, RIGHT).questions["by_hand"]
    assert full.score == full.max_score == CFG.questions(SDP)["by_hand"]
    for lang, word in (("en", "calls a function"), ("pt-BR", "chama uma função")):
        q = _graded(tmp_path, "scores = [0, 4 / math.sqrt(2), 1.4142]\n" + RIGHT.split("\n", 1)[1], lang)
        assert q.questions["by_hand"].score == 0 and word in "\n".join(q.questions["by_hand"].lines)


@pytest.mark.parametrize("lang", EDITIONS)
def test_no_student_notebook_shows_an_answer(lang):
    """The answers to 3 and 4 decimals appear nowhere in a student notebook (cells or
    otter's public tests in its metadata): only the instance is shown."""
    import math

    import torch

    q, k, v = (torch.tensor(sdp.BY_HAND["by_hand"][n], dtype=torch.float64) for n in ("query", "key", "value"))
    out, w = sdp.scaled_dot_product_attention(q, k, v)
    numbers = torch.cat([(q @ k.T / math.sqrt(2))[0], w[0], out[0]]).tolist()
    text = json.dumps(template(SDP, lang), ensure_ascii=False)
    for x in numbers:
        if abs(x) > 1e-9:  # "the" scores 0: a zero is everywhere
            for places in (3, 4):
                assert f"{x:.{places}f}" not in text, (x, places)

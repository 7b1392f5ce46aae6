"""The times the notebooks promise are measured (autograder/build/time_text.py): each is a
generated cell whose text the committed figures of bench/notebook_times.py make, in the
master notebook and in both editions of the student notebook; a range always holds its
figure; and no other cell of any notebook promises a time by hand."""

import json
import re

import pytest

from autograder import config
from autograder.build import editions, texts, time_text
from conftest import ROOT, template

ASSIGNMENTS = list(config.load().assignments)
LABS = [a for a in ASSIGNMENTS if time_text.cells(a)]
# a time in prose: minutes, seconds, hours (in either language). The hours of work a notebook
# expects are a teacher's estimate of a person's effort, not a machine's time: left out.
TIME_WORDS = re.compile(r"\b(minutes?|seconds|hours?|minutos?|segundos|horas)\b", re.I)
EFFORT = re.compile(r"\b(hours?|horas?)( e meia)? (of|de) (work|trabalho)\b", re.I)


def _master(assignment):
    return json.loads((ROOT / "assignments" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))


def _src(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _time_cells(nb):
    return [(time_text.tag_of(c["metadata"].get("tags") or []), _src(c)) for c in nb["cells"] if _is_time(c)]


def _is_time(cell):
    return bool(time_text.tag_of((cell.get("metadata") or {}).get("tags") or []))


def test_the_labs_promise_their_notebook_and_their_training_cell():
    assert set(LABS) >= {"seq2seq_attention", "transformer_block"}, LABS
    for a in LABS:
        assert sorted(time_text.cells(a)) == sorted(time_text.TAGS), a


@pytest.mark.parametrize("lang", editions.EDITIONS)
@pytest.mark.parametrize("assignment", LABS)
def test_every_promise_says_what_the_committed_figures_measured(assignment, lang):
    """A figure measured again (or a promise edited by hand) that the notebooks do not say fails
    here: the master notebook and both committed editions hold the text the figures make."""
    data = time_text.figures()["assignments"][assignment]
    for nb, where in ((_master(assignment), "master"), (template(assignment, lang), f"student_template/{lang}")):
        if where == "master" and lang != "en":
            continue
        cells = _time_cells(nb)
        assert cells, f"{assignment} ({where}): no generated time cell"
        for tag, text in cells:
            assert text == time_text.render(tag, assignment, lang, nb), f"{assignment} ({where}): {tag} is stale"
        (training,) = time_text.training_cells(nb)
        if where != "master":  # the bench's figures are keyed by the student notebook's cell ids
            assert data["cells"][training] == data["training"] <= data["notebook"]
        said = dict(cells)[time_text.TRAINING_TAG]
        assert f"{round(data['training'])} s" in said and time_text.span(data["training"], lang) in said


@pytest.mark.parametrize("lang", editions.EDITIONS)
def test_a_promised_range_holds_its_figure(lang):
    figures = [s for d in time_text.figures()["assignments"].values() for s in (d["notebook"], *d["cells"].values())]
    for seconds in [0, 12.5, 59.9, 60, 74, 119.9, 120, 315, 3599, *figures]:
        said = time_text.span(seconds, lang)
        if said == texts.get("time_under_minute", lang):
            assert seconds < 60
            continue
        lo, hi = (int(n) for n in re.findall(r"\d+", said))
        assert lo * 60 <= seconds < hi * 60 and hi == lo + 1, (seconds, said)


@pytest.mark.parametrize("lang", editions.EDITIONS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_cell_promises_a_time_by_hand(assignment, lang):
    """Every markdown cell a student reads (the generated "How you are graded" included), but the
    measured time cells: a time in prose there would be a promise no figure backs."""
    for cell in template(assignment, lang)["cells"]:
        if cell["cell_type"] != "markdown" or _is_time(cell):
            continue
        text = EFFORT.sub("", _src(cell))
        found = TIME_WORDS.search(text)
        assert found is None, (
            f"{assignment} ({lang}), cell {cell.get('id')}: {text[max(0, found.start() - 80) :][:200]!r}"
        )


def test_a_time_cell_without_its_figure_is_a_one_line_error():
    nb = _master(LABS[0])
    with pytest.raises(time_text.TimeTextError, match=r"^renamed_lab: no figures .*notebook_times.py --write`\)$"):
        time_text.render(time_text.TAG, "renamed_lab", "en", nb)

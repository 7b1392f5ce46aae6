"""Grading through the CLI, as an instructor does: the reference gets full
marks, the untouched template 0, each example loses points exactly where it
should; the otter autograder zip, run the way Gradescope runs it, agrees."""

import json
import shutil

import pytest

from autograder import release
from autograder.audit import examples as examples_mod
from conftest import ASSIGNMENTS, run_cli, scores

pytestmark = pytest.mark.slow  # every test here grades, builds or runs a kernel

EXPECTED = examples_mod.expected()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every example submission graded once by `python -m autograder grade`, one batch per
    assignment (a batch has one assignment) into OUT/<assignment>/."""
    out = tmp_path_factory.mktemp("graded")
    for a in ASSIGNMENTS:
        run_cli("grade", examples_mod.EXAMPLES / a, "--out", out / a, "--no-progress")
    return out


def result_for(out, rel):
    a, stem = rel.split("/")
    path = out / a / stem.removesuffix(".ipynb") / "results.json"  # the id: the path under the folder graded
    if path.exists():
        return path
    raise AssertionError(f"no results.json for {rel}")


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_each_example_scores_as_expected(graded, rel):
    exp = EXPECTED[rel]
    got = scores(result_for(graded, rel))
    from autograder import config

    maxes = config.load().questions(exp["assignment"])
    assert set(got) == set(maxes), "results.json names every question of grading.yml"
    lost = sorted(q for q, (s, m) in got.items() if s < m)
    if exp["expect"] == "zero":
        assert all(s == 0 for s, _ in got.values()), got
    else:
        assert lost == sorted(exp["loses"]), f"{rel}: lost points on {lost}, expected {exp['loses']}"
    for q, (s, m) in got.items():
        assert m == maxes[q]


def test_failure_messages_name_the_check_and_hide_hidden_data(graded):
    data = json.loads(result_for(graded, "scaled_dot_product/sdpa_scaled_by_dk.ipynb").read_text())
    out = {t["name"]: t["output"] for t in data["tests"]}["scaled_dot_product_attention"]
    assert "FAIL test_shapes_and_values" in out and "max abs error" in out and "at index" in out
    assert "Likely cause: the scores are divided by d_k" in out
    assert "tensor(" not in out, "never print hidden tensors"


def test_template_gets_zero_with_not_implemented_messages(graded):
    """Every stub raises NotImplementedError; the typed answers (the by-hand numbers, the shapes
    drill's words: not code) say they are not answered."""
    unanswered = {
        "by_hand": "not answered yet",  # by_hand_not_answered, in English
        "shapes_drill": "replace it with your answer",  # drill_not_answered
    }
    for a in ASSIGNMENTS:
        data = json.loads(result_for(graded, f"{a}/template.ipynb").read_text())
        assert data["score"] == 0
        for t in release.scored(data["tests"]):  # what a student reads at submission
            expected = unanswered.get(t["name"], "NotImplementedError")
            assert expected in t["output"], (a, t["name"], t["output"][:300])


def test_grades_csv_has_one_row_per_submission_and_a_column_per_question(graded):
    import csv

    from autograder import config

    total = 0
    for a in ASSIGNMENTS:
        with open(graded / a / "grades.csv", newline="", encoding="utf-8") as f:
            header, *rows = list(csv.reader(f))
        qs = list(config.load().questions(a))
        assert header == [
            "id",
            "path",
            "assignment",
            "name",
            "email",
            "sid",
            "status",
            "reason",
            *qs,
            "total",
            *[f"{q}_max" for q in qs],
            "total_max",
        ]
        rows = [dict(zip(header, r)) for r in rows]
        total += len(rows)
        assert len({r["id"] for r in rows}) == len(rows)
        for r in rows:
            assert r["assignment"] == a and r["status"] == "graded" and r["reason"] == "", r
            assert float(r["total_max"]) == sum(config.load().questions(a).values())
            assert float(r["total"]) == pytest.approx(sum(float(r[q]) for q in qs), abs=1e-9)
    assert total == len(EXPECTED)


def test_same_names_in_different_folders_get_distinct_ids_and_broken_files_do_not_stop_the_batch(tmp_path):
    for who in ("alice", "bob"):
        (tmp_path / who).mkdir()
        shutil.copy(
            examples_mod.EXAMPLES / "classic_attention" / "reference.ipynb", tmp_path / who / "submission.ipynb"
        )
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / "submission.ipynb").write_text('{"cells": [')
    out = tmp_path / "out"
    run_cli(
        "grade",
        tmp_path / "alice",
        tmp_path / "bob",
        tmp_path / "carol",
        "--assignment",
        "classic_attention",
        "--out",
        out,
        "--no-progress",
    )
    assert scores(out / "alice__submission" / "results.json")["masked_softmax"] == (4.0, 4.0)
    assert scores(out / "bob__submission" / "results.json")["masked_softmax"] == (4.0, 4.0)
    broken = json.loads((out / "carol__submission" / "results.json").read_text())
    assert broken["score"] == 0 and "not a notebook" in broken["output"]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_otter_zip_in_gradescope_layout_agrees_with_the_judge(tmp_path, assignment, graded, dist):
    from autograder.demo import question_scores, run_zip

    zips = sorted((dist / assignment).glob("*-autograder*.zip"))
    assert len(zips) == 1, zips
    for name in ("reference", "template"):
        sub = examples_mod.EXAMPLES / assignment / f"{name}.ipynb"
        via_zip = question_scores(run_zip(zips[0], sub, tmp_path / f"gs-{name}"))
        via_judge = {q: s for q, (s, _) in scores(result_for(graded, f"{assignment}/{name}.ipynb")).items()}
        assert via_zip == via_judge

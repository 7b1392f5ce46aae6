"""A fault of the kit is never a quiet zero: a hidden suite that cannot be
collected makes every submission `internal_error` (results.json, grades.csv),
the report lists it first, `grade` exits non-zero, and `--resume` regrades it
once the kit is fixed. Run in a copy of the kit, as an instructor who broke a
suite file the night before the deadline would."""

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder import config, messages
from autograder.grade import EXIT_GRADER_FAULT
from autograder.judge import scoring
from autograder.judge.scoring import TestOutcome
from conftest import ROOT, grade, suite_skeleton

CFG = config.load(ROOT / "grading.yml")
EXAMPLES = ROOT / "examples" / "submissions" / "classic_attention"
BROKEN = "classic_attention/test_dot_attention.py"


def _kit_copy(tmp_path):
    """A copy of the kit (the package and the course's grading.yml) to break."""
    kit = tmp_path / "kit"
    shutil.copytree(ROOT / "autograder", kit / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "grading.yml", kit / "grading.yml")
    os.chmod(tmp_path, 0o755)  # the worker's uid reads its side of the copy
    return kit


def _grade(kit, *args):
    env = {**os.environ, "KIT_LANG": "en", "PYTHONPATH": str(kit)}
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *map(str, args), "--no-progress"],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


@pytest.mark.slow
def test_a_suite_that_does_not_collect_is_a_loud_internal_error_and_resume_regrades(tmp_path):
    kit = _kit_copy(tmp_path)
    suite = kit / "autograder/private/assignments" / BROKEN
    good = suite.read_text()
    suite.write_text(good.replace("def test_vectorised(", "def test_vectorised(:", 1))  # one typo
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("reference", "dot_scaled"):
        shutil.copy(EXAMPLES / f"{name}.ipynb", subs / f"{name}.ipynb")
    out = tmp_path / "out"

    proc = _grade(kit, subs, "--out", out, "--assignment", "classic_attention", "--jobs", "1")
    assert proc.returncode == EXIT_GRADER_FAULT, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "GRADER FAULT" in proc.stderr and "--resume" in proc.stderr
    rows = _rows(out)
    assert {r["status"] for r in rows.values()} == {"internal_error"}, rows
    assert all("test_dot_attention.py" in r["reason"] for r in rows.values())
    for sid in rows:
        data = json.loads((out / sid / "results.json").read_text())
        assert data["extra_data"]["status"] == "internal_error"
        assert data["extra_data"]["internal_errors"] >= 1
        assert any("test_dot_attention.py" in e and "cannot be collected" in e for e in data["internal_errors"])
        # the student is told it is not their fault, and is not told what broke
        assert "Your code is not the cause" in data["output"]
        assert "SyntaxError" not in data["output"] + json.dumps(data["tests"])

    report = subprocess.run(
        [sys.executable, "-m", "autograder", "report", out, "--lang", "en"],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(kit)},
    )
    assert report.returncode == 0, report.stderr[-2000:]
    page = next(out.rglob("*.html"), None) if not (out / "report.html").exists() else out / "report.html"
    html = page.read_text()
    look = html[html.index('id="look"') :]
    first_row = look[look.index("<tr data-look") :]
    assert "GRADER FAULT" in first_row[: first_row.index("</tr>")]

    # The kit is fixed: --resume keeps nothing of the faulty run and grades both again.
    suite.write_text(good)
    proc = _grade(kit, subs, "--out", out, "--assignment", "classic_attention", "--jobs", "1", "--resume")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = _rows(out)
    assert {r["status"] for r in rows.values()} == {"graded"}
    assert float(rows["reference"]["total"]) == float(rows["reference"]["total_max"]) == 25.0
    assert float(rows["dot_scaled"]["dot_attention"]) < 3.0
    # and changes.csv says whose scores the fix moved, and why
    with open(out / "changes.csv", newline="", encoding="utf-8") as f:
        moved = list(csv.DictReader(f))
    assert {r["id"] for r in moved} == {"reference", "dot_scaled"}
    assert {r["why"] for r in moved} == {"suites changed"}
    assert sum(float(r["new_score"]) - float(r["old_score"] or 0) for r in moved if r["id"] == "reference") == 25.0


def test_a_check_that_raises_inside_the_judge_makes_the_result_internal_error(tmp_path, monkeypatch):
    """A plain `assert` or a KeyError in a suite (the kit's bug) is not the student's."""
    suite = suite_skeleton(tmp_path, "scaled_dot_product", monkeypatch)
    (suite / "__init__.py").write_text("")
    (suite / "test_oops.py").write_text("QUESTION = 'causal_mask'\n\ndef test_x(sub):\n    {}['missing']\n")
    result = grade(ROOT / "examples/submissions/scaled_dot_product/reference.ipynb", cfg=CFG)
    assert result.status == "internal_error"
    assert any("KeyError" in e for e in result.internal_errors)
    data = result.to_gradescope()
    assert data["extra_data"]["status"] == "internal_error" and data["extra_data"]["internal_errors"] == 1


def _outcomes(question, *rows):
    return [TestOutcome(question, test, "", ok, "" if ok else "wrong", prop=prop) for test, ok, prop in rows]


def test_property_checks_earn_nothing_where_the_values_are_wrong():
    wrong = _outcomes(
        "padding_mask",
        ("test_default_max_len", False, False),
        ("test_explicit_max_len", False, False),
        ("test_on_lengths_device", False, True),
        ("test_inputs_unchanged", True, True),
        ("test_vectorised", True, True),
    )
    q = scoring.score(CFG, "scaled_dot_product", wrong)["padding_mask"]
    assert q.score == 0.0
    # the line names the checks held back and says why they earn nothing, in the feedback's language
    for lang in ("en", "pt-BR"):
        with messages.language(lang):
            lines = scoring.score(CFG, "scaled_dot_product", wrong)["padding_mask"].lines
            labels = ", ".join(messages.check_label(n) for n in ("test_inputs_unchanged", "test_vectorised"))
            assert messages.t("property_gated", checks=labels, share="0") in lines, lines
    assert [r["check"] for r in q.checks if r.get("gated")] == ["test_inputs_unchanged", "test_vectorised"]
    # half the values right: a property check earns at most half
    half = _outcomes(
        "padding_mask",
        ("test_default_max_len", True, False),
        ("test_explicit_max_len", False, False),
        ("test_inputs_unchanged", True, True),
    )
    assert scoring.score(CFG, "scaled_dot_product", half)["padding_mask"].score == round(2 * (1 + 0 + 0.5) / 3, 2)
    # right values: the properties count in full, and no line about the rule
    right = _outcomes(
        "padding_mask",
        ("test_default_max_len", True, False),
        ("test_inputs_unchanged", True, True),
        ("test_vectorised", False, True),
    )
    q = scoring.score(CFG, "scaled_dot_product", right)["padding_mask"]
    gated = messages.t("property_gated", checks="{checks}", share="{share}").split("{")[0]
    assert q.score == round(2 * 2 / 3, 2) and not any(line.startswith(gated) for line in q.lines)


@pytest.mark.slow
def test_a_padding_mask_that_returns_an_empty_tensor_scores_zero(tmp_path):
    from autograder.audit.catalog import fill, reference_sources, reference_typed
    from conftest import template

    sources = reference_sources("scaled_dot_product")
    sources["padding_mask"] = "def padding_mask(lengths, max_len=None):\n    return torch.zeros(0, dtype=torch.bool)\n"
    path = tmp_path / "empty.ipynb"
    path.write_text(json.dumps(fill(template("scaled_dot_product"), sources, reference_typed("scaled_dot_product"))))
    result = grade(path, cfg=CFG)
    assert result.status == "graded"
    assert result.questions["padding_mask"].score == 0.0
    assert result.questions["causal_mask"].score == result.questions["causal_mask"].max_score

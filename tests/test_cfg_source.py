"""One source of settings: the hidden suites collect their cases, mark evidence and
judge likely causes with the cfg the judge was given (`judge.grade(cfg=...)`), the
same one its scores come from, never with a grading.yml of the working folder."""

import pytest

from autograder import config
from conftest import ROOT, grade

SDP = ROOT / "examples" / "submissions" / "scaled_dot_product"
GIVEN = "devices: {cpu: [float64], meta: [float32], cuda: []}\nscoring: {evidence_devices: [meta]}\n"


@pytest.fixture
def given(tmp_path):
    path = tmp_path / "given" / "grading.yml"
    path.parent.mkdir()
    path.write_text(GIVEN)
    return config.load(path)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A working folder of its own (where `config.load()` would look first)."""
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.delenv("KIT_GRADING_YML", raising=False)
    monkeypatch.chdir(here)
    return here


def test_the_cases_and_evidence_marks_follow_the_given_cfg_not_the_working_folders(given, elsewhere):
    (elsewhere / "grading.yml").write_text("devices: {cpu: [float32, float16]}\nscoring: {evidence_devices: [cuda]}\n")
    assert config.load().devices["cpu"] == ["float32", "float16"]  # what a read of the folder's file would give
    result = grade(SDP / "reference.ipynb", cfg=given, lang="en")
    assert result.status == "graded" and not result.internal_errors, result.internal_errors
    assert result.score == result.max_score == sum(given.questions("scaled_dot_product").values())
    cases = {(o.question, o.test, o.case): o.evidence for o in result.outcomes}
    dd = {case for (_, test, case) in cases if case.startswith("cpu-")}
    devices = {case for (_, _, case) in cases if case and not case.startswith("cpu-")}
    assert dd == {"cpu-float64"}, sorted(dd)
    assert devices == {"cpu", "meta"}, sorted(devices)
    assert all(ev == (case == "meta") for (_, _, case), ev in cases.items()), cases


@pytest.mark.slow
def test_likely_causes_take_the_given_cfgs_tolerances(given, elsewhere, tmp_path):
    """A buggy submission's feedback (its likely causes come from `compare.matches`) is the
    same from a working folder whose grading.yml cannot be read: the suites never read it."""
    plain = grade(SDP / "sdpa_scaled_by_dk.ipynb", cfg=given, lang="en")
    (elsewhere / "grading.yml").write_text("tolerances: [this is not a mapping\n")
    with pytest.raises(config.ConfigError):
        config.load()
    there = grade(SDP / "sdpa_scaled_by_dk.ipynb", cfg=given, lang="en")
    assert not there.internal_errors, there.internal_errors
    assert there.score == plain.score < there.max_score
    lines = {n: q.lines for n, q in there.questions.items()}
    assert lines == {n: q.lines for n, q in plain.questions.items()}
    assert any("Likely cause" in line for q in lines.values() for line in q), lines

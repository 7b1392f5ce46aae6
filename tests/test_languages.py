"""The feedback's language: chosen per submission (--lang, else the notebook's
edition, else grading.yml), never changing a score."""

import json

import pytest

from autograder import config, messages
from autograder.audit.catalog import fill_entry, load_entry
from conftest import ROOT, grade, is_failure_line, run_cli, template
from ptbr import english_in

CFG = config.load(ROOT / "grading.yml")


def _buggy(tmp_path, lang=None, name="buggy"):
    entry = load_entry(ROOT / "autograder/private/assignments/scaled_dot_product/catalog/sdpa_scaled_by_dk.py")
    nb = fill_entry(template("scaled_dot_product"), entry)
    if lang is None:
        nb["metadata"].pop("kit_language", None)
    else:
        nb["metadata"]["kit_language"] = lang
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_unknown_language_is_one_clear_line():
    with pytest.raises(messages.MessageError, match="unknown language 'klingon': use one of pt-BR, en"):
        messages.normalize("klingon")
    assert messages.normalize("pt_BR") == messages.normalize("pt") == "pt-BR"


@pytest.mark.slow
def test_same_scores_in_both_languages_and_the_judge_speaks_each(tmp_path):
    path = _buggy(tmp_path)
    en, pt = grade(path, cfg=CFG, lang="en"), grade(path, cfg=CFG, lang="pt-BR")
    assert {n: q.score for n, q in en.questions.items()} == {n: q.score for n, q in pt.questions.items()}
    q_en, q_pt = en.questions["scaled_dot_product_attention"], pt.questions["scaled_dot_product_attention"]
    assert q_en.score < q_en.max_score
    assert q_en.lines[0].startswith("Failed ") and q_pt.lines[0].startswith("Falhou em ")
    assert any(line.startswith("FAIL test_") for line in q_en.lines)
    assert any(line.startswith("FALHOU test_") for line in q_pt.lines)
    assert any(line.startswith("Causa provável") for line in q_pt.lines)
    assert all(is_failure_line(a) == is_failure_line(b) for a, b in zip(q_en.lines, q_pt.lines))
    assert pt.to_gradescope()["extra_data"]["language"] == "pt-BR"
    assert en.to_gradescope()["extra_data"]["language"] == "en"


@pytest.mark.slow
def test_the_notebooks_edition_chooses_unless_lang_is_given(tmp_path):
    path = _buggy(tmp_path, lang="en")
    assert grade(path, cfg=CFG).language == "en"
    assert grade(path, cfg=CFG, lang="pt-BR").language == "pt-BR"
    assert grade(_buggy(tmp_path, lang=None, name="plain"), cfg=CFG).language == messages.default(CFG)


@pytest.mark.slow
def test_grade_check_and_ci_take_lang(tmp_path):
    path = _buggy(tmp_path, lang="en")
    out = run_cli(
        "grade", path, "--out", tmp_path / "out", "--lang", "pt-BR", "--no-progress", "--jobs", "1", check=False
    )
    data = json.loads(next((tmp_path / "out").glob("*/results.json")).read_text())
    assert data["extra_data"]["language"] == "pt-BR" and "Falhou em" in json.dumps(data, ensure_ascii=False)
    # the command speaks the language asked throughout: its table, what it wrote, the report's pointer
    lines = [line.replace(str(tmp_path), "") for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    assert any(line.startswith("1 resultados gravados em ") for line in lines), lines
    assert any(line.split()[:2] == ["submissão", "by_hand"] for line in lines), lines
    assert not [(english_in(line), line) for line in lines if english_in(line)]
    assert (
        messages.t("grade_jobs", "pt-BR", got=0)
        in run_cli("grade", path, "--out", tmp_path / "o3", "--jobs", "0", "--lang", "pt-BR", check=False).stderr
    )
    bad = run_cli("grade", path, "--out", tmp_path / "out2", "--lang", "xx", check=False)
    assert bad.returncode == 2 and "unknown language 'xx'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    checked = run_cli("check", path, "--lang", "pt-BR", check=False)
    assert "Verificações públicas de" in checked.stdout, checked.stdout + checked.stderr
    ci = run_cli("ci", path, "--out", tmp_path / "ci", "--lang", "pt-BR", check=False)
    assert "| questão | nota | de |" in ci.stdout, ci.stdout + ci.stderr


def test_a_file_that_cannot_be_read_is_told_in_the_courses_language(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text("{ not json")
    pt = grade(path, cfg=CFG, lang="pt-BR")
    assert pt.status == "not_graded" and pt.notes[0].startswith(
        "Sem nota: broken.ipynb não é um notebook (JSON inválido"
    )
    en = grade(path, cfg=CFG, lang="en")
    assert en.notes[0].startswith("Not graded: broken.ipynb is not a notebook (invalid JSON")
    assert en.to_gradescope()["extra_data"]["status"] == "not_graded"


def test_a_courses_own_grading_yml_sets_its_language(tmp_path):
    own = tmp_path / "grading.yml"
    own.write_text("language: en\n")
    assert config.load(own).language == "en"
    assert config.load(ROOT / "grading.yml").language == "pt-BR"  # the course this kit serves

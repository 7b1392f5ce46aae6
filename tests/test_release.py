"""Feedback released on the course's terms (grading.yml `feedback`, autograder/release.py): what
results.json shows at submission and after the deadline, what `grade` and `release` write to the
feedback files, and which settings the schema refuses."""

import json
from pathlib import Path

import pytest
import yaml

from autograder import config, declarations, release
from autograder.audit import catalog
from autograder.grade import feedback, results
from autograder.judge import GradeResult, by_hand
from autograder.judge.scoring import TestOutcome, score
from autograder.private.suites import failing
from conftest import course_cfg, grade, template

PACKAGED = yaml.safe_load(config.packaged_text())
A = "scaled_dot_product"


def _course(feedback_terms=None, assignment_terms=None):
    course = {"assignments": {A: dict(PACKAGED["assignments"][A])}}
    if feedback_terms is not None:
        course["feedback"] = feedback_terms
    if assignment_terms is not None:
        course["assignments"][A]["feedback"] = assignment_terms
    return course


def test_the_typed_questions_are_the_readers_forms():
    assert set(release.TYPED) == {f.question for f in by_hand.forms(declarations.typed_forms())}


def test_terms_come_from_the_question_then_the_assignment_then_the_course(tmp_path):
    cfg = course_cfg(
        tmp_path,
        _course(
            {"at_submission": "score", "after_deadline": "public"},
            {
                "after_deadline": "all",
                "released": "after_published",
                "questions": {"causal_mask": {"at_submission": "public"}},
            },
        ),
    )
    terms = release.course_terms(cfg.data, A, cfg.questions(A))
    assert terms["padding_mask"] == release.Terms("score", "all", "after_published")
    assert terms["causal_mask"] == release.Terms("public", "all", "after_published")
    # the packaged file: everything at once, but a typed question only its score until the deadline
    default = release.course_terms(config.load().data, A, config.load().questions(A))
    assert default["causal_mask"] == release.EVERYTHING and not default["causal_mask"].later
    assert default["by_hand"] == release.Terms("score", "all") and default["by_hand"].later


def test_a_typed_question_says_answer_by_answer_at_submission_only_where_its_own_entry_asks(tmp_path):
    asked = course_cfg(tmp_path, _course(None, {"questions": {"by_hand": {"at_submission": "all"}}}))
    assert release.course_terms(asked.data, A, asked.questions(A))["by_hand"] == release.EVERYTHING
    course_wide = course_cfg(tmp_path, _course({"at_submission": "all"}))
    assert release.course_terms(course_wide.data, A, course_wide.questions(A))["by_hand"].at_submission == "score"


@pytest.mark.parametrize(
    ("course", "words"),
    [
        (
            _course({"at_submission": "all", "after_deadline": "score"}),
            "assignments.scaled_dot_product.feedback is refused",
        ),
        (_course(None, {"questions": {"causal_mask": {"at_submission": "al"}}}), "must be one of score, public, all"),
        (
            _course(None, {"questions": {"causal_msk": {"at_submission": "all"}}}),
            "is not a question of this assignment",
        ),
        (_course({"released": "after_due"}), "feedback.released must be one of after_due_date, after_published"),
        (_course({"show": "all"}), "feedback.show is not a setting of the kit"),
    ],
)
def test_a_setting_that_cannot_hold_is_one_line_naming_the_key(tmp_path, course, words):
    with pytest.raises(config.ConfigError) as err:
        course_cfg(tmp_path, course)
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A scaled_dot_product notebook with the by-hand numbers divided by d_k and causal_mask built
    with triu, graded under a course file that shows the score only at submission, and causal_mask's
    public checks."""
    folder = tmp_path_factory.mktemp("release")
    entries = {e.name: e for e in catalog.entries(A)}
    sources = {**catalog.reference_sources(A), **entries["causal_mask_triu"].sources}
    typed = {**catalog.reference_typed(A), **entries["by_hand_divided_by_dk"].typed}
    path = folder / "sub.ipynb"
    path.write_text(json.dumps(catalog.fill(template(A), sources, typed)))
    course = _course({"at_submission": "score"}, {"questions": {"causal_mask": {"at_submission": "public"}}})
    cfg = course_cfg(folder, course)
    result = grade(path, assignment=A, cfg=cfg)
    return folder, cfg, result


def _tests(data):
    return {x["name"]: x for x in data["tests"]}


def test_score_only_at_submission_the_details_after_the_due_date(graded):
    _, _, result = graded
    data = result.to_gradescope()
    tests = _tests(data)
    scored = {x["name"]: x for x in release.scored(data["tests"])}
    assert list(scored) == list(result.questions)  # one scored test per question, in order
    assert all(x["visibility"] == "visible" for x in scored.values())
    assert scored["by_hand"]["score"] < 2 and scored["causal_mask"]["score"] < 2
    for name in ("by_hand", "causal_mask"):
        first, later = scored[name]["output"], tests[f"{name}: full feedback"]
        assert "FAIL" not in first and "Likely cause" not in first, first
        assert later["visibility"] == "after_due_date" and "max_score" not in later
        assert "FAIL" in later["output"]
    assert "Which of your answers are wrong is shown after the deadline." in scored["by_hand"]["output"]
    assert "Public checks (the ones grader.check runs in the notebook)" in scored["causal_mask"]["output"]
    assert "What failed, and why, is shown after the deadline." in scored["causal_mask"]["output"]
    # a question with full marks says so, and has nothing held back
    assert scored["padding_mask"]["output"] == "2 / 2: all checks passed"
    assert "padding_mask: full feedback" not in tests
    # the scores are the grading's, whatever is shown
    assert data["score"] == result.score == sum(x["score"] for x in scored.values())


def test_grade_writes_the_submission_view_and_release_the_full_one_without_grading(graded, tmp_path):
    _, cfg, result = graded
    out = tmp_path / "out"
    results.write_result(out, "alice", {**result.to_gradescope(), "assignment": A}, cfg)
    stored = (out / "alice" / "results.json").read_bytes()
    before = (out / "alice" / feedback.MD_NAME).read_text()
    assert "FAIL" not in before and "full feedback" not in before and "## by\\_hand" in before
    assert release.main(out_dir=str(out)) == 0
    after = (out / "alice" / feedback.MD_NAME).read_text()
    page = (out / "alice" / feedback.HTML_NAME).read_text()
    assert "FAIL" in after and "FAIL" in page
    assert after.count("## ") == before.count("## ") == 4  # each question once, its later view in place
    assert (out / "alice" / "results.json").read_bytes() == stored  # nothing graded or rewritten


def test_release_of_a_folder_without_results_is_one_line(tmp_path, capsys):
    assert release.main(out_dir=str(tmp_path)) == 2
    assert "no <id>/results.json" in capsys.readouterr().err


def test_a_typed_answer_that_cannot_count_is_said_at_submission():
    """Not answered, unreadable or missing is about the answer's form, not whether it is right:
    its failure line is kept apart (`form_lines`) and shown whatever the terms hold back."""
    with pytest.raises(pytest.fail.Exception) as failed:
        failing.fail_form("`scores`: not answered yet")
    assert failed.value.form is True
    outcomes = [
        TestOutcome("by_hand", "test_scores", "", False, "`scores`: not answered yet", form=True),
        TestOutcome("by_hand", "test_weights", "", False, "`weights`: 2 of 3 numbers differ"),
    ]
    q = score(config.load(), A, outcomes)["by_hand"]
    assert q.form_lines == ["FAIL test_scores: `scores`: not answered yet"]
    result = GradeResult(Path("x.ipynb"), A, {"by_hand": q}, terms={"by_hand": release.Terms("score", "all")})
    first = release.scored(result.to_gradescope()["tests"])[0]["output"]
    assert "not answered yet" in first and "2 of 3" not in first

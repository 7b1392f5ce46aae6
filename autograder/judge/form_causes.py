"""The form findings (`judge.form`) in words, where they cost points: the likely cause the
grade names under each question a finding costs, and the same failure in the public checks
(`public_checks.report`), so a notebook's self-check and its grade say the same thing."""

from collections.abc import Iterable, Mapping
from typing import Any

from autograder.judge.detect import question_name
from autograder.judge.remote import cell_label
from autograder.judge.scoring import MAX_LINE_CHARS, CauseSaid
from autograder.messages import t
from autograder.text import one_line

MAX_CHARS = 400


def text(finding: Mapping[str, Any]) -> str:
    """One finding as the student reads it, its cells named as Jupyter shows them."""
    fields = dict(finding["fields"])
    for key in ("cell", "later"):
        if key in fields:
            fields[key] = cell_label(fields[key], finding["cell"])
    return one_line(t(finding["key"], **fields), MAX_CHARS)


def costs(finding: Mapping[str, Any], questions: Iterable[str]) -> list[str]:
    """The questions among `questions` whose graded function or class a finding costs."""
    names = {question_name(n) for n in finding["names"]}
    return [q for q in questions if q in names]


def by_question(findings: Iterable[Mapping[str, Any]], questions: Iterable[str]) -> dict[str, list[str]]:
    """{question: [the findings' texts that cost it]}, in the findings' order."""
    questions = list(questions)
    out: dict[str, list[str]] = {}
    for f in findings:
        for q in costs(f, questions):
            line = text(f)
            if line not in out.setdefault(q, []):
                out[q].append(line)
    return out


def name_causes(questions: Mapping[str, Any], findings: Iterable[Mapping[str, Any]]) -> None:
    """Under each question that lost points, the findings that cost it, as its first likely
    cause; shown with the typed answers' form failures, whatever the course holds back."""
    for name, causes in by_question(findings, questions).items():
        q = questions[name]
        if q.score >= q.max_score:
            continue
        said = [CauseSaid(one_line(t("form_cause", cause=c), MAX_CHARS), c) for c in causes]
        lines = [line for line, _ in said]
        q.lines[min(1, len(q.lines)) : min(1, len(q.lines))] = lines
        q.form_lines[:0] = lines
        q.causes_said[:0] = said


# A typed answer's cell that breaks its rule: the words its hidden suite fails with (the keys
# each suite passes to `checks.typed_answers`; tests/test_parity.py holds the two to the same text).
TYPED_KEYS = {
    "by_hand": ("by_hand_unreadable", "cause_by_hand_rule"),
    "shapes_drill": ("drill_unreadable", "cause_drill_rule"),
}


def typed_problem(question: str, data: Mapping[str, Any] | None) -> str | None:
    """The failure the grade gives a typed answer's cell that breaks its rule (`by_hand.read`'s
    record), or None."""
    problem = (data or {}).get("problem")
    if question not in TYPED_KEYS or not isinstance(problem, Mapping):
        return None
    unreadable, rule = TYPED_KEYS[question]
    where = ", ".join(cell_label(label, index) for index, label in zip(data["cells"], data["labels"]))  # type: ignore[index]
    reason = t(problem["key"], **problem["fields"])
    # each part cut as the grade cuts its failure's and its likely cause's words (scoring's
    # MAX_LINE_CHARS), never the two joined: a long cell label (`cell_label`'s first line) cut
    # the cause here where the grade shows it whole
    symptom = one_line(t(unreadable, cell=where), MAX_LINE_CHARS)
    return f"{symptom} {t('cause_marker')} {one_line(t(rule, reason=reason), MAX_LINE_CHARS)}"


def public_costs(sub: Any, questions: Iterable[str]) -> dict[str, list[str]]:
    """{question: [what the grade will say it loses for the notebook's form]}: the form findings
    and a typed answer's unreadable cell, for the public checks (`public_checks.report`)."""
    questions = list(questions)
    out = by_question(getattr(sub, "form", None) or [], questions)
    typed = {"by_hand": getattr(sub, "by_hand", None), **(getattr(sub, "typed", None) or {})}
    for q, data in typed.items():
        line = typed_problem(q, data) if q in questions else None
        if line:
            out.setdefault(q, []).append(line)
    return out

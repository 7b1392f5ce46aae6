"""How a question's score is made, and the feedback that explains it.

A question's hidden tests are its checks, one property each (values, padding,
gradients, error contract, ...). A check earns the fraction of its scored cases
that pass; cases on an evidence device (grading.yml `scoring.evidence_devices`,
CUDA) are reported and never scored, so a score is the same on every machine.
The question earns its points times the weighted mean of its checks (weights
from grading.yml `scoring.weights`, else a check's `weight` mark, else 1).

No credit without a right answer: a check marked `property` (inputs unchanged,
vectorised, from scratch, a device, a regression test that passes on a correct
function) says nothing about the values, so it earns at most the share the
question's other checks (its value checks) earn: a function that returns the
wrong values everywhere scores 0, whatever else holds. The feedback says so
where the rule took points.

Feedback per question: a summary first (which checks failed, then each likely
cause once), then one line per kind of failure (the same symptom in many checks
and cases is one line, with how many), the causes already said left out.
"""

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from autograder.judge.counterexample import Shown
from autograder.judge.failure import COMPARED, Msg, full_text
from autograder.messages import check_label, number, t  # noqa: F401 - check_label re-exported
from autograder.text import MAX_LINE_CHARS, Code, Strong, one_line

if TYPE_CHECKING:
    from autograder.config import Config

MAX_LINES_PER_QUESTION = 25  # feedback has a fixed size, whatever the student's code prints or raises


@dataclass
class TestOutcome:
    __test__ = False  # not a pytest test class
    question: str
    test: str  # the test function: one check
    case: str  # the parametrisation id, or ""
    passed: bool
    message: str = ""  # a failure's symptom: its words up to where its cause starts
    cause: Msg | None = None  # its likely cause (`judge.failure`), rendered where it is shown
    evidence: bool = False  # reported, never scored
    weight: float | None = None  # from the test's `weight` mark
    prop: bool = False  # a `property` check: earns at most the value checks' share
    # a failed value check's counterexample (`judge.counterexample`), or None
    counterexample: Shown | None = None
    form: bool = False  # a typed answer missing, unreadable or incomplete (suites' failing.fail_form)
    # what the failure is whatever input showed it (an error the call raised), or "": its symptom
    # then says it; failures of one kind are one feedback line
    kind: str = ""
    # what a value comparison with the reference found wrong (`failure.COMPARED`), or ""
    compared: str = ""


class FailureSaid(NamedTuple):
    """One failure line of a question's feedback as data: `where` (its checks and cases, with
    how many) and `words` (everything after `fail_prefix`: where, then its symptom)."""

    where: str
    words: str


class CauseSaid(NamedTuple):
    """One likely-cause line of a question's feedback as data: the `line` as shown and the
    cause's own `words` in it."""

    line: str
    words: str


@dataclass
class QuestionResult:
    name: str
    max_score: float
    score: float = 0.0
    lines: list[str] = field(default_factory=list)  # feedback: summary, likely causes, then one failure per line
    failed_checks: list[str] = field(default_factory=list)  # test functions with a failed scored case
    checks: list[dict[str, Any]] = field(default_factory=list)  # plain data per check (`check_records`), for reports
    # failures about a typed answer's form (missing, unreadable, not answered): shown whatever
    # the course holds back until the deadline (`autograder.release`)
    form_lines: list[str] = field(default_factory=list)
    # What `lines` say, as data for the pages that show a part of them (the ci summary, the
    # audit), so that none reads a line back: its failure lines in order, its likely-cause lines
    # in order, and the line saying why it has no grade (not graded, no test ran) or "".
    failures: list[FailureSaid] = field(default_factory=list)
    causes_said: list[CauseSaid] = field(default_factory=list)
    ungraded: str = ""
    counterexample: Shown | None = None  # the one its lines show, as data


def _symptom(outcome: TestOutcome) -> str:
    """A failure's symptom as its feedback line shows it (the full stop before a cause dropped)."""
    if outcome.cause is None:
        return outcome.message.strip()
    symptom = outcome.message.rstrip()
    return symptom[:-1] if symptom.endswith(".") else symptom


class Feedback(NamedTuple):
    """A question's feedback lines (`QuestionResult.lines`), its failed checks, and what its
    lines say as data (`QuestionResult.failures`, `.causes_said`, `.counterexample`)."""

    lines: list[str]
    failed: list[str]
    failures: list[FailureSaid]
    causes_said: list[CauseSaid]
    counterexample: Shown | None = None


def _feedback(checks: dict[str, list[TestOutcome]]) -> "Feedback":
    """Lines for one question from {test: [outcomes]} (tests in run order), with what they say
    as data."""
    failed = [name for name, items in checks.items() if any(not i.passed and not i.evidence for i in items)]
    evidence = [name for name, items in checks.items() if any(not i.passed and i.evidence for i in items)]
    if not failed and not evidence:
        return Feedback([], [], [], [])
    causes: list[Msg] = []
    # one line per kind of failure (its symptom, cause and device class), whatever checks and
    # cases show it: {kind: {test: [cases]}}
    merged: dict[tuple[str, Msg | None, bool], dict[str, list[str]]] = {}
    example: dict[tuple[str, Msg | None, bool], str] = {}  # a kind's symptom as its first case shows it
    where: dict[Msg, list[str]] = {}
    for test in failed + [name for name in evidence if name not in failed]:
        for i in checks[test]:
            if i.passed:
                continue
            symptom, cause = _symptom(i), i.cause
            if cause and cause not in causes:
                causes.append(cause)
            if cause and test not in where.setdefault(cause, []):
                where[cause].append(test)
            key = (i.kind or symptom, cause, i.evidence)
            example.setdefault(key, symptom)
            merged.setdefault(key, {}).setdefault(test, []).append(i.case)
    details: list[str] = []
    failures: list[FailureSaid] = []
    for key, tests in merged.items():
        _, cause, ev = key
        symptom = example[key]
        n = sum(len(cases) for cases in tests.values())
        count = t("fail_cases", n=n) if n > 1 else ""
        ref = t("likely_cause_ref", n=causes.index(cause) + 1) if cause and len(causes) > 1 else ""
        tail = t("evidence_tail") if ev else ""
        checks_at = f"{_where_failed(tests)}{count}"
        words = f"{checks_at}: {symptom}{ref}{tail}"
        details.append(one_line(f"{t('fail_prefix')} {words}", MAX_LINE_CHARS))
        failures.append(FailureSaid(checks_at, one_line(words, MAX_LINE_CHARS)))
    total = len(checks)
    lines: list[str] = []
    checks_failed = ", ".join(check_label(name) for name in failed)
    summary = t("summary_failed", failed=len(failed), total=total, checks=checks_failed) if failed else None
    lines.append(Strong(summary or t("summary_only_evidence", total=total)))

    def scope(cause: Msg) -> str:  # which checks a cause explains, when not every failed one
        tests = where[cause]
        return "" if set(tests) >= set(failed) else f" ({', '.join(check_label(name) for name in tests)})"

    if len(causes) == 1:
        said = [CauseSaid(t("likely_cause_one", scope=scope(causes[0]), cause=_words(causes[0])), _words(causes[0]))]
    else:
        said = [
            CauseSaid(t("likely_cause_numbered", n=n, scope=scope(c), cause=_words(c)), _words(c))
            for n, c in enumerate(causes, 1)
        ]
    said = [CauseSaid(one_line(line, MAX_LINE_CHARS), one_line(words, MAX_LINE_CHARS)) for line, words in said]
    lines += [line for line, _ in said]
    # the question's counterexample (the first its failures carry), under its causes
    shown = next((i.counterexample for test in failed + evidence for i in checks[test] if i.counterexample), None)
    lines += [Code(one_line(line, MAX_LINE_CHARS)) for line in (shown.lines if shown else ())]
    room = MAX_LINES_PER_QUESTION - len(lines)
    if len(details) > room:
        more = len(details) - room + 1
        details, failures = details[: room - 1] + [t("more_failed", n=more)], failures[: room - 1]
    return Feedback(lines + details, failed, failures, said, shown)


def _words(cause: Msg) -> str:
    """A likely cause's words in the language in force."""
    return cause.render().strip()


def _where_failed(tests: Mapping[str, list[str]], checks: int = 3, cases: int = 4) -> str:
    """`test_a[c1, c2], test_b` for the checks and cases one failure line stands for: the
    first `checks` checks with their first `cases` case ids, the rest counted (the line's
    symptom comes after it and must not be cut off)."""
    parts = []
    for test, ids in list(tests.items())[:checks]:
        named = [c for c in ids if c]
        shown = ", ".join(named[:cases]) + (", ..." if len(named) > cases else "")
        parts.append(f"{test}[{shown}]" if shown else test)
    if len(tests) > checks:
        parts.append(t("fail_more_checks", n=len(tests) - checks))
    return ", ".join(parts)


def _form_lines(checks: dict[str, list[TestOutcome]]) -> list[str]:
    """One line per distinct form failure (`TestOutcome.form`) of a question, in run order."""
    lines: list[str] = []
    for test, items in checks.items():
        for i in items:
            line = one_line(f"{t('fail_prefix')} {test}: {full_text(i.message, i.cause)}", MAX_LINE_CHARS)
            if i.form and not i.passed and line not in lines:
                lines.append(line)
    return lines[:MAX_LINES_PER_QUESTION]


def check_records(checks: dict[str, list[TestOutcome]], gated: Container[str] = ()) -> list[dict[str, Any]]:
    """Plain data per check of one question, from {test: [outcomes]}: cases scored,
    failed, failed on an evidence device, the likely causes its failures gave (`Msg`s), what
    its failed value comparisons compared (`compared`, `failure.COMPARED`, where any), and
    (`gated`) whether it is a property check held back by wrong values."""
    records: list[dict[str, Any]] = []
    for test, items in checks.items():
        scored = [i for i in items if not i.evidence]
        causes: list[Msg] = []
        for i in items:
            if not i.passed:
                cause = i.cause
                if cause and cause not in causes:
                    causes.append(cause)
        record: dict[str, Any] = {
            "check": test,
            "cases": len(scored),
            "failed": sum(not i.passed for i in scored),
            "evidence_failed": sum(not i.passed for i in items if i.evidence),
            "causes": causes,
        }
        compared = [c for c in COMPARED if any(not i.passed and i.compared == c for i in items)]
        if compared:
            record["compared"] = compared
        if test in gated:
            record["gated"] = True
        records.append(record)
    return records


def score(
    cfg: "Config", assignment: str, outcomes: Iterable[TestOutcome], kit_fault: bool = False
) -> dict[str, QuestionResult]:
    """{question: QuestionResult} from the suites' outcomes. `kit_fault`: the run had a
    grader fault, so a question no test ran for says so (not yet graded, not the student's)."""
    questions = {n: QuestionResult(n, float(p)) for n, p in cfg.questions(assignment).items()}
    by_question: dict[str, dict[str, list[TestOutcome]]] = {}
    for o in outcomes:
        by_question.setdefault(o.question, {}).setdefault(o.test, []).append(o)
    for name, checks in by_question.items():
        q = questions.get(name)
        if q is None:
            continue
        # test -> (weight, share of its scored cases passed, is a property)
        shares: dict[str, tuple[float, float, bool]] = {}
        for test, items in checks.items():
            scored = [i for i in items if not i.evidence]
            if not scored:
                continue
            marked = next((i.weight for i in items if i.weight is not None), None)
            w = (
                cfg.weight(name, test)
                if test in ((cfg.scoring.get("weights") or {}).get(name) or {})
                else (marked if marked is not None else 1.0)
            )
            shares[test] = (w, sum(i.passed for i in scored) / len(scored), any(i.prop for i in items))
        values = [(w, s) for w, s, prop in shares.values() if not prop]
        value_share = sum(w * s for w, s in values) / sum(w for w, _ in values) if values else 1.0
        gated = [test for test, (w, s, prop) in shares.items() if prop and s > value_share]
        total = sum(w for w, _, _ in shares.values())
        earned = sum(w * (min(s, value_share) if prop else s) for w, s, prop in shares.values())
        q.score = round(q.max_score * earned / total, 2) if total else 0.0
        q.lines, q.failed_checks, q.failures, q.causes_said, q.counterexample = _feedback(checks)
        if gated:
            line = t(
                "property_gated",
                checks=", ".join(check_label(n) for n in gated),
                share=number(100 * value_share, ".0f"),
            )
            q.lines.insert(min(1, len(q.lines)), one_line(line, MAX_LINE_CHARS))
        q.checks = check_records(checks, gated)
        q.form_lines = _form_lines(checks)
    for name, q in questions.items():
        if name not in by_question:
            q.ungraded = t("internal_error_question" if kit_fault else "no_test_ran")
            q.lines.append(q.ungraded)
    return questions


def note_stand_ins(questions: dict[str, QuestionResult], used: Mapping[str, Iterable[str]]) -> None:
    """Say, under a question graded with the judge standing in for a function
    it calls, that the student's own version of that function fails its checks."""
    from autograder.judge.detect import question_name

    for target, names in used.items():
        q = questions.get(question_name(target))
        if q is None:
            continue
        for name in sorted(names):
            callee = questions.get(question_name(name))
            if callee is not None and callee.failed_checks:
                q.lines.insert(
                    min(2, len(q.lines)),
                    one_line(t("stand_in_note", target=target, name=name, question=callee.name), MAX_LINE_CHARS),
                )

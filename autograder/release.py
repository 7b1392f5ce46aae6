"""What a student sees of a question's feedback, and when (grading.yml `feedback`).

Three levels, each showing more than the last:

- `score`: the question's score only;
- `public`: the score and the results of the notebook's public checks (what
  `grader.check` runs in the notebook: nothing the student could not see before
  submitting);
- `all`: everything the hidden checks say (which failed, the likely causes, a
  counterexample), as the kit always wrote it.

A question has one level at submission and one after the deadline (never less
than the first). They are read from the question's own entry, else the
assignment's, else the course's (`Terms`). A typed question (by_hand,
shapes_drill: its feedback says answer by answer which is wrong) shows at most
its score at submission unless its own entry says otherwise.

In results.json (Gradescope's format) each question keeps one scored test, always
`visible`, holding the submission-time view; where the later view shows more, a
second test follows it with no score of its own, holding the later view, with
Gradescope's `visibility` `released` (after_due_date or after_published). The
kit's own feedback files show the first (`grade`) or both (`release`): `shown`.

This module imports nothing heavy: the report and the batch read results.json
through `scored` without loading the judge.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LEVELS = ("score", "public", "all")
RELEASED = ("after_due_date", "after_published")  # Gradescope's visibility of the later view
VISIBLE, HIDDEN = "visible", "hidden"
TYPED = ("by_hand", "shapes_drill")  # answered in a typed cell (autograder.judge.by_hand.forms)


@dataclass(frozen=True)
class Terms:
    at_submission: str = "all"
    after_deadline: str = "all"
    released: str = "after_due_date"

    @property
    def later(self) -> bool:
        """Whether the view after the deadline shows more than the one at submission."""
        return LEVELS.index(self.after_deadline) > LEVELS.index(self.at_submission)


EVERYTHING = Terms()


def terms(data: Mapping[str, Any], assignment: str, question: str) -> Terms:
    """The terms of one question, from grading.yml's data (already checked by the schema)."""
    course = data.get("feedback") or {}
    own = ((data.get("assignments") or {}).get(assignment) or {}).get("feedback") or {}
    mine = (own.get("questions") or {}).get(question) or {}

    def pick(key: str, default: str) -> str:
        return str(mine.get(key) or own.get(key) or course.get(key) or default)

    at = pick("at_submission", "all")
    if question in TYPED and "at_submission" not in mine:
        at = "score"  # answer by answer only where the course asks for it on this question
    after = pick("after_deadline", "all")
    if LEVELS.index(after) < LEVELS.index(at):
        raise ValueError(f"after_deadline {after} shows less than at_submission {at} for question {question}")
    return Terms(at, after, str(own.get("released") or course.get("released") or "after_due_date"))


def course_terms(data: Mapping[str, Any], assignment: str, questions: Iterable[str]) -> dict[str, Terms]:
    return {q: terms(data, assignment, q) for q in questions}


def needs_public(all_terms: Mapping[str, Terms]) -> bool:
    """Whether some question shows the public checks (so the judge runs them)."""
    return any("public" in (x.at_submission, x.after_deadline) for x in all_terms.values())


# -- reading results.json ------------------------------------------------------------
def scored(tests: Any) -> list[dict[str, Any]]:
    """results.json's question tests: those with a score (a later view has none)."""
    return [x for x in tests or [] if isinstance(x, dict) and not later_view(x)]


def later_view(test: Mapping[str, Any]) -> bool:
    """Whether a results.json test is a question's later view (no score of its own)."""
    return "max_score" not in test and "score" not in test and test.get("visibility") in (*RELEASED, HIDDEN)


def shown(tests: Any, released: bool) -> list[tuple[str, str]]:
    """[(question, Markdown)] a student reads: at submission (`released` False) the visible
    tests; after the release each question's later view in place of its first."""
    return [(str(x.get("name", "")), str(x.get("output") or "")) for x in shown_tests(tests, released)]


def shown_tests(tests: Any, released: bool) -> list[dict[str, Any]]:
    """The scored tests a student reads (`shown`), each with the output and the level
    (`extra_data.level`) of the view shown: after the release, its later view's."""
    out: list[dict[str, Any]] = []
    for x in tests or []:
        if not isinstance(x, dict):
            continue
        visibility = x.get("visibility", VISIBLE)
        if not later_view(x):
            if visibility == VISIBLE or (released and visibility != HIDDEN):
                out.append(dict(x))
        elif released and visibility in RELEASED and out:
            out[-1] = {**out[-1], "output": x.get("output"), "extra_data": x.get("extra_data")}
    return out


def level(test: Mapping[str, Any]) -> str | None:
    """The level (`LEVELS`) of the view a results.json test holds, where the judge wrote it."""
    found = (test.get("extra_data") or {}).get("level") if isinstance(test.get("extra_data"), dict) else None
    return found if found in LEVELS else None


# -- the `release` verb ----------------------------------------------------------------
def main(*, out_dir: str) -> int:
    """`release`: rewrite every OUT/<id>/feedback.md and feedback.html with what a student sees
    after the deadline, from the stored results.json (nothing is graded again)."""
    import json
    import sys
    from pathlib import Path

    from autograder import config as config_mod
    from autograder.grade.results import RESULTS_NAME, write_feedback
    from autograder.messages import t

    cfg = config_mod.load()
    root = Path(out_dir)
    folders = sorted(p.parent for p in root.glob(f"*/{RESULTS_NAME}")) if root.is_dir() else []
    if not folders:
        print(t("release_none", results=RESULTS_NAME, out=out_dir), file=sys.stderr)
        return 2
    bad = []
    for folder in folders:
        try:
            data = json.loads((folder / RESULTS_NAME).read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            write_feedback(folder, folder.name, data, cfg, released=True)
        except (OSError, ValueError) as exc:
            bad.append(f"{folder.name}: {type(exc).__name__}: {exc}"[:300])
    for line in bad:
        print(f"release: {line}", file=sys.stderr)
    print(t("release_wrote", n=len(folders) - len(bad), total=len(folders)))
    return 1 if bad else 0

"""OUT/changes.csv: the scores a `grade --resume` regrade moved, and why it regraded them.

    id, student, question, old_score, new_score, why

One row per question whose score moved, of each submission regraded because what
scores it changed since its results.json (`autograder.grade.fingerprint`): `why` is
"suites changed" (its hidden suites or reference solution), "grading.yml changed"
(the settings that score it), both joined with "; ", or "graded by an older kit" (a
results.json that kept no fingerprint). A score that did not move is not a row; a
question only one side has gets an empty cell on the other. `student` is the
submitters' names (else student ids, else emails), joined with "; ", empty when
unknown. Every `--resume` writes it whole (a header alone: the regrade moved
nothing); a run without `--resume` removes it, so the file is always about the
folder's last regrade.
"""

import csv
import os
from typing import Any

from autograder import atomic, release
from autograder.grade.fingerprint import stored
from autograder.grade.grades_csv import _text, submitters
from autograder.grade.text import display

CHANGES_NAME = "changes.csv"
COLUMNS = ("id", "student", "question", "old_score", "new_score", "why")
SUITES_CHANGED = "suites changed"
SETTINGS_CHANGED = "grading.yml changed"
OLDER_KIT = "graded by an older kit"
EPS = 1e-9


def why(data: dict[str, Any], now: dict[str, str] | None) -> str | None:
    """Why the result `data` must be regraded under the fingerprint `now`; None: it stands."""
    before = stored(data)
    if before is None:
        return OLDER_KIT if now is not None else None
    if now is None:
        return None
    parts = [w for k, w in (("suites", SUITES_CHANGED), ("settings", SETTINGS_CHANGED)) if before.get(k) != now[k]]
    return "; ".join(parts) or None


def _scores(data: dict[str, Any]) -> dict[str, float]:
    tests = [x for x in release.scored(data.get("tests")) if isinstance(x.get("name"), str)]
    return {x["name"]: float(x.get("score") or 0.0) for x in tests}


def moved(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, float | None, float | None]]:
    """[(question, old score, new score)] of the questions whose score moved, in the new order."""
    before, after = _scores(old), _scores(new)
    order = list(after) + [q for q in before if q not in after]
    return [
        (q, before.get(q), after.get(q))
        for q in order
        if before.get(q) is None or after.get(q) is None or abs(before[q] - after[q]) > EPS
    ]


def student(data: dict[str, Any]) -> str:
    people = submitters(data)
    for field in ("name", "sid", "email"):
        found = [display(str(p.get(field)), 200) for p in people if p.get(field)]
        if found:
            return "; ".join(found)
    return ""


def rows(regraded: list[tuple[str, dict[str, Any], dict[str, Any], str]]) -> list[list[Any]]:
    """changes.csv's rows for [(id, old results, new results, why)] in that order."""
    out = []
    for sid, old, new, reason in regraded:
        for q, before, after in moved(old, new):
            out.append(
                [sid, _text(student(new)), q, "" if before is None else before, "" if after is None else after, reason]
            )
    return out


def write(out: str | os.PathLike[str], regraded: list[tuple[str, dict[str, Any], dict[str, Any], str]]) -> None:
    """OUT/changes.csv (written whole, then renamed)."""
    with atomic.replacing(os.path.join(out, CHANGES_NAME)) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows(regraded))


def forget(out: str | os.PathLike[str]) -> None:
    """Remove a changes.csv a run without --resume would leave stale."""
    try:
        os.unlink(os.path.join(out, CHANGES_NAME))
    except FileNotFoundError:
        pass

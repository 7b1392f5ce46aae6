"""A submission's files under OUT/<id>/: written as it finishes, read back by --resume.

results.json (Gradescope's format) with feedback.md and feedback.html beside it
(`feedback`); each is written whole, then renamed (`autograder.atomic`).
"""

import json
import os
from pathlib import Path
from typing import Any

from autograder import atomic, messages
from autograder.config import Config
from autograder.grade import feedback, grades_csv
from autograder.grade.text import clean as _clean
from autograder.messages import t

RESULTS_NAME = "results.json"


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_json(path, _clean(data))


def write_result(out: str | os.PathLike[str], sid: str, data: dict[str, Any], cfg: Config) -> None:
    """OUT/<id>/feedback.md and feedback.html, then results.json (each written whole, then renamed).

    results.json comes last: it is what says a submission is done (--resume, an
    interrupted batch's grades.csv), so nothing runs between it and the caller's
    record of the result but a few bytecodes, where a Ctrl-C could fall."""
    folder = Path(out) / sid
    folder.mkdir(parents=True, exist_ok=True)
    write_feedback(folder, sid, data, cfg)
    write_json_atomic(folder / RESULTS_NAME, data)


def write_feedback(folder: Path, sid: str, data: dict[str, Any], cfg: Config, released: bool = False) -> None:
    """folder/feedback.md and feedback.html: what the student sees at submission, or
    (`released`) after the deadline (`autograder.release`)."""
    clean = _clean(data)
    a = clean.get("assignment")
    title = (
        messages.title(cfg, a, feedback.language(clean)) if a in cfg.assignments else None
    )  # in the feedback's language
    atomic.write_text(folder / feedback.MD_NAME, feedback.markdown(sid, clean, title, released))
    atomic.write_text(folder / feedback.HTML_NAME, feedback.page(sid, clean, title, released))


def not_graded(reason: str, assignment: str | None, cfg: Config, lang: str | None = None) -> dict[str, Any]:
    """results.json for a file the judge is not given at all (not a regular file)."""
    qs = cfg.questions(assignment) if assignment in cfg.assignments else {}
    with messages.language(lang):
        line, note = t("not_graded_line", reason=reason), t("not_graded_note", reason=reason)
    tests = [
        {"name": q, "score": 0.0, "max_score": float(p), "output": f"0 / {p:g}\n{line}", "visibility": "visible"}
        for q, p in qs.items()
    ]
    return {
        "score": 0.0,
        "tests": tests,
        "assignment": assignment if qs else None,
        "output": note,
        "extra_data": {"status": "not_graded"},
    }


# -- read back (--resume) -------------------------------------------------------
def index(out: str | os.PathLike[str]) -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """{(real path, sha256): (id, data)} of every results.json already under `out`."""
    found: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    try:
        entries = sorted(os.listdir(out))
    except OSError:
        return found
    for name in entries:
        target = Path(out) / name / RESULTS_NAME
        try:
            data = json.loads(target.read_text(encoding="utf-8"))
            sub = data["extra_data"]["submission"]
            found[(sub["path"], sub["sha256"])] = (name, data)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def reusable(data: dict[str, Any], assignment: str | None) -> bool:
    """A result kept by --resume: graded against the same assignment, no grader error."""
    extra = data.get("extra_data") or {}
    errors = extra.get("internal_errors")
    if errors is None:  # a results.json from before the kit recorded it
        errors = "internal grader error" in str(data.get("output", ""))
    return (
        data.get("assignment") == assignment
        and not errors
        and not data.get("internal_errors")
        and extra.get("status") != grades_csv.INTERNAL_ERROR
    )

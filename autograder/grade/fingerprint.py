"""What scores a submission, as two hashes kept in its results.json (`extra_data.fingerprint`).

`grade --resume` keeps a result only when its fingerprint is the one the kit would grade
with now, so a fix to a hidden suite or to grading.yml regrades exactly the submissions
it touches, and `changes.csv` says which part moved (`autograder.grade.changes`):

- suites: every file of the assignment's hidden suites (autograder/private/assignments/<a>/, its catalog and battery aside),
  the suites' shared files beside them, and its reference solution;
- settings: the merged grading.yml's parts that score it (canonical JSON): its questions'
  points, the tolerances, devices, scoring and limits, and its training run's section
  where it has one. The title, the language and the CI settings change no score.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

from autograder import layout
from autograder.config import RUN_QUESTION, Config

NOT_SCORING_LIMITS = ("export_metadata_mb",)  # read by `grade` before any judge starts


def _files(folder: Path, recursive: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    found = folder.rglob("*") if recursive else folder.iterdir()
    return sorted(p for p in found if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def suites(assignment: str) -> str:
    """sha256 over the assignment's hidden suites, the shared suite files and its reference."""
    digest = hashlib.sha256()
    folder = layout.suite(assignment)
    own = [p for p in _files(folder, True) if not layout.audit_only(p.relative_to(folder))]
    files = own + _files(layout.SUITES, False)
    files.append(layout.SOLUTIONS / f"{assignment}.py")
    for path in files:
        digest.update(path.relative_to(layout.PRIVATE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
        digest.update(b"\0")
    return digest.hexdigest()


def scoring_settings(cfg: Config, assignment: str) -> dict[str, Any]:
    """The merged grading.yml's parts that score `assignment`'s submissions."""
    questions = cfg.questions(assignment)
    limits = {k: v for k, v in cfg.limits.items() if k not in NOT_SCORING_LIMITS}
    parts = {
        "questions": questions,
        "tolerances": cfg.data.get("tolerances"),
        "devices": cfg.data.get("devices"),
        "scoring": cfg.scoring,
        "limits": limits,
    }
    if RUN_QUESTION in questions:
        parts["run"] = cfg.run(assignment)
    if cfg.costs(assignment):  # only where it grades a cost: the others' fingerprints stay as they were
        parts["costs"] = cfg.costs(assignment)
    return parts


def settings(cfg: Config, assignment: str) -> str:
    text = json.dumps(scoring_settings(cfg, assignment), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def of(cfg: Config, assignment: str | None) -> dict[str, str] | None:
    """{"suites", "settings"} for an assignment grading.yml knows, else None."""
    if assignment not in cfg.assignments:
        return None
    return {"suites": suites(assignment), "settings": settings(cfg, assignment)}


def stored(data: dict[str, Any]) -> dict[str, str] | None:
    """The fingerprint a results.json was graded with (None: a kit that kept none)."""
    found = (data.get("extra_data") or {}).get("fingerprint")
    return found if isinstance(found, dict) else None

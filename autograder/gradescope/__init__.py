"""`python -m autograder gradescope [--root /autograder]`: Gradescope's entry point.

`run_autograder` in the kit's zip calls this for every submission. It finds
the submitted notebook (or otter export zip) in `ROOT/submission/`, grades it
with the trusted judge (`autograder.judge.grade`), and writes
`ROOT/results/results.json` in Gradescope's format
(`GradeResult.to_gradescope()`).

- The root is `--root`, else `$KIT_AUTOGRADER_ROOT`, else `/autograder`.
- The assignment is `$KIT_ASSIGNMENT` (set by `run_autograder`), else the one
  the notebook names.
- Nothing is ever unpickled, and otter is never imported: a `.OTTER_LOG` in an
  export zip is ignored, and the submission's code only runs in the judge's
  sandboxed worker.
- results.json is always written, with a score of 0 and a message when the
  submission cannot be graded, and even when the grader itself fails.
"""

import os
import sys
import traceback
from pathlib import Path

from autograder import atomic
from autograder.messages import t

DEFAULT_ROOT = "/autograder"
IGNORED_PARTS = ("__MACOSX", ".ipynb_checkpoints")


class NoSubmission(Exception):
    """No single notebook to grade; the message says why, for the student."""


def resolve_root(arg=None):
    return Path(arg or os.environ.get("KIT_AUTOGRADER_ROOT") or DEFAULT_ROOT)


def _candidates(folder, suffix):
    found = []
    for path in sorted(folder.rglob(f"*{suffix}")):
        rel = path.relative_to(folder)
        if not path.is_file() or path.is_symlink():
            continue
        if any(p.startswith(".") or p in IGNORED_PARTS for p in rel.parts):
            continue
        found.append(path)
    return found


def find_submission(folder, assignment=None):
    """The one file to grade in `folder`: a notebook, else an otter export zip.

    With several notebooks, the one named `<assignment>.ipynb` wins (Gradescope
    submissions sometimes carry extra files); otherwise it is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NoSubmission(t("gs_no_folder", folder=folder))
    notebooks = _candidates(folder, ".ipynb")
    if len(notebooks) > 1 and assignment:
        named = [p for p in notebooks if p.name == f"{assignment}.ipynb"]
        if len(named) == 1:
            return named[0]
    if len(notebooks) == 1:
        return notebooks[0]
    if len(notebooks) > 1:
        names = ", ".join(str(p.relative_to(folder)) for p in notebooks)
        raise NoSubmission(
            t("gs_many_notebooks", n=len(notebooks), names=names)
            + (t("gs_named", assignment=assignment) if assignment else "")
        )
    zips = _candidates(folder, ".zip")
    if len(zips) == 1:
        return zips[0]
    if len(zips) > 1:
        names = ", ".join(str(p.relative_to(folder)) for p in zips)
        raise NoSubmission(t("gs_many_zips", n=len(zips), names=names))
    raise NoSubmission(t("gs_nothing"))


def _zero_result(assignment, message):
    """A results.json for a submission that could not be graded."""
    tests = []
    try:
        from autograder import config as config_mod

        cfg = config_mod.load()
        if assignment in cfg.assignments:
            tests = [
                {
                    "name": q,
                    "score": 0.0,
                    "max_score": float(p),
                    "output": f"0 / {p:g}\n{t('not_graded_line', reason=message)}",
                    "visibility": "visible",
                }
                for q, p in cfg.questions(assignment).items()
            ]
    except Exception:  # noqa: BLE001 - the zero result must not fail
        pass
    from autograder import __version__

    return {
        "score": 0.0,
        "tests": tests,
        "output": t("not_graded_note", reason=message),
        "execution_time": 0.0,
        "extra_data": {"kit_version": __version__, "status": "not_graded"},
    }


def _write(results_dir, data):
    results_dir.mkdir(parents=True, exist_ok=True)
    atomic.write_json(results_dir / "results.json", data, end="\n")


def grade_root(root, assignment=None):
    """Grade `root/submission` into `root/results/results.json`; returns the results dict.
    Never raises for a bad submission or an internal failure."""
    root = Path(root)
    assignment = assignment or os.environ.get("KIT_ASSIGNMENT") or None
    try:
        path = find_submission(root / "submission", assignment)
    except NoSubmission as exc:
        data = _zero_result(assignment, str(exc))
        _write(root / "results", data)
        return data
    try:
        from autograder.judge import grade

        result = grade(path, assignment=assignment)  # notes a notebook whose metadata names another one
        data = result.to_gradescope()
        for line in result.internal_errors:
            print(t("gradescope_internal_error", line=line), file=sys.stderr)
    except Exception:  # noqa: BLE001 - whatever happens, Gradescope gets a results.json
        print(traceback.format_exc(), file=sys.stderr)
        data = _zero_result(assignment, t("gradescope_failed"))
    _write(root / "results", data)
    return data


def main(*, root: str | None = None, assignment: str | None = None) -> int:
    """`gradescope`: grade ROOT/submission into ROOT/results/results.json (run_autograder)."""
    folder = resolve_root(root)
    try:
        data = grade_root(folder, assignment)
    except BaseException:  # noqa: BLE001 - last resort: still write results.json
        print(traceback.format_exc(), file=sys.stderr)
        try:
            _write(
                folder / "results",
                _zero_result(
                    assignment or os.environ.get("KIT_ASSIGNMENT"),
                    "the autograder failed; please tell the course staff",
                ),
            )
        except OSError:
            pass
        return 1
    total = sum(t.get("max_score", 0) for t in data.get("tests", []))
    print(t("gradescope_graded", score=float(data.get("score", 0)), total=float(total)))
    return 0

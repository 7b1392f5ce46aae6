"""`python -m autograder check NOTEBOOK`: the notebook's public tests, with a summary.

What `grader.check_all()` runs, for a student repository's CI: the public
tests otter put in the student notebook (its metadata, or a `tests/` folder
beside it), run in the sandboxed worker against the notebook's own code. It
reads neither `solutions/` nor the hidden suites. Exit status 0 when every
public test passes, 1 otherwise, 2 when the notebook cannot be read, 3 when the kit or the
machine fails (a worker it cannot confine, an error of its own): never 1, a failed check.

`--json` prints the same verdicts as one JSON object for scripts and CI
(`verdicts`), nothing else on stdout; the exit status is the same.
"""

import os
import sys
import traceback
from pathlib import Path

from autograder import config as config_mod
from autograder import messages, text
from autograder.faults import KitFault
from autograder.judge import notebook_language
from autograder.judge.notebook import SubmissionError, load_submission
from autograder.judge.public_checks import public_tests, report
from autograder.judge.remote import Remote
from autograder.messages import t
from autograder.sandbox.client import WorkerDied
from autograder.sandbox.limits import Limits


def run_checks(path, cfg=None, forkserver=None):
    """(submission, cell errors, [{"name", "cases": [{"name", "ok", "error"?}], "error"?}]).

    forkserver: a `sandbox.forkserver.ForkServer` to fork the worker from (the
    audit checks many notebooks); None starts a worker of its own."""
    cfg = cfg or config_mod.load()
    return checked(load_submission(path, cfg.assignments, keep_provided=True), cfg, forkserver)


def checked(sub, cfg, forkserver=None):
    """`run_checks` of a submission already read."""
    tests = public_tests(sub.notebook, sub.path)
    if not tests:
        raise SubmissionError("check_no_tests", name=Path(sub.path).name)
    # Provided cells stay as the notebook has them: a self-check, not grading.
    remote = Remote(sub, "", Limits.from_config(cfg.limits), forkserver=forkserver)
    try:
        results = remote.public(tests)
    finally:
        remote.close()
    return sub, remote.cell_errors, results


def summary_markdown(name, rows, cell_errors):
    """A job summary of the public checks; student text is escaped (`text.markdown`)."""
    passed = sum(r[1] for r in rows)
    lines = [
        f"### {t('check_summary_title', name=text.markdown(name, 120), passed=passed, total=len(rows))}",
        "",
        t("check_summary_header"),
        "| --- | ---: | --- |",
    ]
    for question, ok, good, total, errors in rows:
        first = f"{text.markdown(errors[0][0], 60)}: {text.markdown(errors[0][1], 200)}" if errors else ""
        lines.append(f"| `{text.markdown(question, 60)}` | {good}/{total} | {first} |")
    lines += ["", t("check_summary_footer")]
    lines += [f"> {text.markdown(n)}" for n in cell_errors[:5]]
    return "\n".join(lines) + "\n"


def verdicts(name, assignment, rows, cell_errors):
    """The public checks' verdicts as plain data (`check --json`): per question whether it
    passed, its cases passed of its cases, and each failure (case, one-line error, in the
    language in force); the notes about cells; the totals."""
    questions = [
        {
            "question": question,
            "passed": ok,
            "cases_passed": good,
            "cases": total,
            "failures": [{"case": case, "error": text.one_line(error)} for case, error in errors],
        }
        for question, ok, good, total, errors in rows
    ]
    return {
        "notebook": name,
        "assignment": assignment,
        "language": messages.current(),
        "passed": sum(q["passed"] for q in questions),
        "total": len(questions),
        "questions": questions,
        "notes": [text.one_line(line) for line in cell_errors],
    }


def main(
    *,
    notebook: str,
    assignment: str | None = None,
    lang: str | None = None,
    summary: str | None = None,
    json: bool = False,
) -> int:
    """`check`: run `notebook`'s public tests (what grader.check_all() runs), print what passed (`json`:
    as one JSON object), and append a job summary to `summary` (default: $GITHUB_STEP_SUMMARY).
    `assignment` is taken and not needed: the notebook's public tests are its own."""
    try:
        lang = messages.normalize(lang) if lang else None
    except messages.MessageError as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    # The notebook is read once, by the reader (its limited helper), before its edition can
    # choose the language: what cannot be read is worded in the course's language (or `lang`).
    with messages.language(lang):
        if Path(notebook).is_dir():
            return _cannot(t("check_folder", path=notebook))
        cfg = config_mod.load()
        try:
            sub = load_submission(notebook, cfg.assignments, keep_provided=True)
        except SubmissionError as exc:
            return _cannot(t("check_cannot", path=text.one_line(notebook), reason=text.one_line(str(exc))))
    with messages.language(lang or notebook_language(sub)):
        try:
            return _main(notebook, sub, cfg, summary, json)
        except KitFault as exc:  # the kit's or the machine's (a worker it cannot confine): never exit 1, a failed check
            return _cannot(f"check: {exc}", FAULT)
        except Exception:  # noqa: BLE001 - any other error here is the kit's own: its traceback for the staff, exit 3
            traceback.print_exc()
            return FAULT


FAULT = 3  # the kit's own failure, as `grade` exits on an internal_error


def _cannot(line: str, status: int = 2) -> int:
    print(line, file=sys.stderr)
    return status


def _main(notebook: str, sub, cfg, summary: str | None, as_json: bool = False) -> int:
    try:
        sub, cell_errors, results = checked(sub, cfg)
    except (SubmissionError, WorkerDied) as exc:
        return _cannot(
            t("check_cannot", path=text.one_line(notebook), reason=text.one_line(getattr(exc, "reason", exc)))
        )
    rows = report(results, sub)
    failed = sum(not r[1] for r in rows)
    target = summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(summary_markdown(Path(notebook).name, rows, cell_errors))
    if as_json:
        import json

        found = verdicts(text.one_line(Path(notebook).name), sub.assignment, rows, cell_errors)
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 1 if failed else 0
    print(
        t(
            "check_title",
            name=text.one_line(Path(notebook).name),
            assignment=f" ({sub.assignment})" if sub.assignment else "",
        )
    )
    for question, ok, good, total, errors in rows:
        print(f"  {text.one_line(question, 32):<32} {t('check_passed') if ok else t('check_failed')} ({good}/{total})")
        for case, error in errors:
            print(f"      {text.one_line(case, 60)}: {text.one_line(error)}")
    for line in cell_errors[:5]:
        print(f"  {t('check_note', text=text.one_line(line))}")
    print(t("check_total", passed=len(rows) - failed, total=len(rows)))
    return 1 if failed else 0

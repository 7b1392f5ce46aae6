"""`python -m autograder check NOTEBOOK`: the notebook's public tests, with a summary.

What `grader.check_all()` runs, for a student repository's CI: the public
tests otter put in the student notebook (its metadata, or a `tests/` folder
beside it), run in the sandboxed worker against the notebook's own code. It
reads neither `solutions/` nor the hidden suites. Exit status 0 when every
public test passes, 1 otherwise, 2 when the notebook cannot be read.
"""

import os
import sys
from pathlib import Path

from autograder import config as config_mod
from autograder import messages
from autograder.judge import text
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
    sub = load_submission(path, cfg.assignments, keep_provided=True)
    tests = public_tests(sub.notebook, path)
    if not tests:
        raise SubmissionError("check_no_tests", name=Path(path).name)
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


def main(*, notebook: str, assignment: str | None = None, lang: str | None = None, summary: str | None = None) -> int:
    """`check`: run `notebook`'s public tests (what grader.check_all() runs), print what passed, and
    append a job summary to `summary` (default: $GITHUB_STEP_SUMMARY). `assignment` is taken and not
    needed: the notebook's public tests are its own."""
    try:
        lang = messages.normalize(lang) if lang else None
    except messages.MessageError as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    with messages.language(lang or _edition(notebook)):
        return _main(notebook, summary)


def _edition(path):
    """The language of the notebook's edition (its metadata), or None: a quick look, no code read."""
    try:
        import json

        with open(path, "rb") as f:
            head = f.read(64 << 20)
        lang = (json.loads(head).get("metadata") or {}).get("kit_language")
        return messages.normalize(lang) if lang else None
    except (OSError, ValueError, AttributeError, messages.MessageError):
        return None


def _main(notebook: str, summary: str | None) -> int:
    if Path(notebook).is_dir():
        print(t("check_folder", path=notebook), file=sys.stderr)
        return 2
    try:
        sub, cell_errors, results = run_checks(notebook)
    except (SubmissionError, WorkerDied) as exc:
        print(
            t("check_cannot", path=text.one_line(notebook), reason=text.one_line(getattr(exc, "reason", exc))),
            file=sys.stderr,
        )
        return 2
    rows = report(results, sub)
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
    failed = sum(not r[1] for r in rows)
    print(t("check_total", passed=len(rows) - failed, total=len(rows)))
    target = summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(summary_markdown(Path(notebook).name, rows, cell_errors))
    return 1 if failed else 0

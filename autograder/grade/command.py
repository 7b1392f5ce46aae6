"""`python -m autograder grade`: the command around the batch (its checks, its score table, its exit status)."""

import os
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

from autograder import config as config_mod
from autograder import messages, release
from autograder.grade import grades_csv
from autograder.grade import shard as shard_mod
from autograder.grade.batch import BATCH, JOBS_ENV, default_jobs, export_limit, grade_batch
from autograder.grade.grades_csv import CSV_NAME, first_line, was_graded
from autograder.grade.interrupts import EXIT_GRADER_FAULT, EXIT_INTERRUPTED, BatchInterrupted
from autograder.grade.progress import say
from autograder.grade.text import display
from autograder.messages import t


def _reason(data):
    return first_line(data) if not was_graded(data) else ""


def score_table(rows, cfg):
    """A plain-text table: one row per submission, one column per question."""
    lines = []
    by_assignment = {}
    for sid, path, data in rows:
        by_assignment.setdefault(data.get("assignment"), []).append((sid, data))
    for a, items in by_assignment.items():
        qs = list(cfg.questions(a)) if a in cfg.assignments else []
        maxes = {q: p for q, p in cfg.questions(a).items()} if qs else {}
        width = max([len(s) for s, _ in items] + [10])
        lines.append(f"\n{a or t('grade_unknown_assignment')}")
        head = t("grade_table_submission").ljust(width) + "".join(f"{q[:14]:>16}" for q in qs)
        lines.append("  " + head + f"{t('grade_table_total'):>10}")
        for sid, data in items:
            scores = {t["name"]: t["score"] for t in release.scored(data.get("tests"))}
            cells = "".join(f"{scores.get(q, 0):>10g}/{maxes[q]:<5g}" for q in qs)
            total = sum(maxes.values()) if maxes else 0
            lines.append("  " + sid.ljust(width) + cells + f"{data.get('score', 0):>5g}/{total:<4g}")
    return "\n".join(lines)


def _usage_error(message):
    say(f"grade: {message}")
    return 2


def main(*, lang: str | None = None, **options) -> int:
    """`grade`: grade `submissions` (files or folders) into `out`, print a score table; the exit
    status says what happened (0, 1: none could be graded, 2: a usage error, EXIT_GRADER_FAULT,
    EXIT_INTERRUPTED). `shard`: "I/N". The batch's own API is `grade_batch`. Everything it prints
    is in `lang` (else the course's language), as the feedback it writes with `lang` is."""
    try:
        lang = messages.normalize(lang) if lang else None
    except messages.MessageError as exc:
        return _usage_error(str(exc))
    with messages.language(lang):
        return _grade(lang=lang, **options)


def _grade(
    *,
    submissions: Sequence[str],
    out: str,
    assignment: str | None = None,
    resume: bool = False,
    jobs: int | None = None,
    no_progress: bool = False,
    lang: str | None = None,
    shard: str | None = None,
) -> int:
    try:
        cfg = config_mod.load()
    except config_mod.ConfigError as exc:
        return _usage_error(str(exc))
    if assignment and assignment not in cfg.assignments:
        name = repr(display(assignment, 100))
        return _usage_error(t("grade_unknown_assignment_given", name=name, known=", ".join(cfg.assignments)))
    if jobs is not None and jobs < 1:
        return _usage_error(t("grade_jobs", got=jobs))
    if jobs is None:
        try:
            jobs = default_jobs()
        except ValueError as exc:
            return _usage_error(t("grade_jobs_env", env=JOBS_ENV, got=repr(display(str(exc), 40))))
    try:
        part = shard_mod.parse(shard) if shard is not None else None
        export_limit(cfg)
    except (shard_mod.ShardError, config_mod.ConfigError) as exc:
        return _usage_error(str(exc))
    folder = Path(out)
    if os.path.lexists(folder) and not folder.is_dir():
        return _usage_error(t("grade_out_not_folder", out=display(folder)))
    if (folder / CSV_NAME).is_dir():
        return _usage_error(t("grade_csv_is_folder", path=display(folder / CSV_NAME)))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _usage_error(t("grade_out_cannot_create", out=display(folder), reason=exc.strerror or exc))
    try:  # a folder we cannot write into (read-only, another user's) is one line, not a traceback later
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return _usage_error(t("grade_out_cannot_write", out=display(folder), reason=exc.strerror or exc))
    if part and not assignment:
        say(t("grade_shard_detects", i=part[0], n=part[1]))
    try:
        rows = grade_batch(
            submissions, folder, assignment or BATCH, resume, not no_progress, cfg, jobs=jobs, lang=lang, shard=part
        )
    except KeyboardInterrupt as stop:
        signum = getattr(stop, "signum", None) or signal.SIGINT
        done = (
            t("grade_stopped_after", n=len(stop.rows), total=stop.total) if isinstance(stop, BatchInterrupted) else ""
        )
        signame = signal.Signals(signum).name
        say("\n" + t("grade_stopped", signal=signame, done=done, out=display(folder), csv=display(folder / CSV_NAME)))
        return EXIT_INTERRUPTED.get(signum, 130)
    if not rows and part and rows.found:
        print(
            t("grade_shard_empty", i=part[0], n=part[1], found=rows.found, path=display(folder / shard_mod.SHARD_NAME))
        )
        return 0
    if not rows:
        say(t("grade_none_found"))
        return 2
    print(score_table(rows, cfg))
    faults = [(sid, data) for sid, _, data in rows if grades_csv.status(data) == grades_csv.INTERNAL_ERROR]
    failed = [
        (sid, data)
        for sid, _, data in rows
        if not was_graded(data) and grades_csv.status(data) != grades_csv.INTERNAL_ERROR
    ]
    for sid, data in failed:
        say(f"grade: {sid}: {display(_reason(data), 300)}")
    for sid, data in faults:
        say(t("grade_fault_one", sid=sid, reason=grades_csv.reason(data)))
    of = t("grade_wrote_shard", i=part[0], n=part[1], found=rows.found) if part else ""
    print("\n" + t("grade_wrote", n=len(rows), of=of, out=display(folder), csv=display(folder / CSV_NAME)))
    if not part:  # a shard's report comes after the merge
        from autograder import report

        print(report.pointer(folder))
    if faults:
        say(t("grade_faults", n=len(faults), total=len(rows)))
        return EXIT_GRADER_FAULT
    if len(failed) == len(rows):
        say(t("grade_none_graded"))
        return 1
    return 0

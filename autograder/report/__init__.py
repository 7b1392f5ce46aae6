"""`python -m autograder report OUT [--out FILE.html] [--lang pt-BR|en] [--export canvas|moodle]`:
the instructor's class report of a folder `grade` wrote.

Reads OUT (every `<id>/results.json`, `grades.csv`, and where they are
`changes.csv` and `not_submitted.csv`: `load`), so it runs from the public part
of the kit too; the similar-submissions section also reads each notebook where
its results.json says it was graded from, and the student template's stubs (in
a checkout of the kit), and says so where they are not there. Writes one self-contained HTML page
(default OUT/report.html: score histograms and statistics per assignment,
per question and per check, the most common likely causes with the
submissions that show them, similar submissions (`similar`) and what needs a
look; `page`) and OUT/similar.html beside it (the similar pairs side by side,
`similar_page`), prints the same
in short on stdout (`terminal`), and with `--export` writes the CSV Canvas or
Moodle imports (`export`). The same results give the same bytes, so a merged
run's report equals a single run's.

Language: `--lang`, else grading.yml's `language` (`messages.default()`).
"""

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import atomic, messages
from autograder.messages import t


def pointer(out_dir):
    """The line `grade` ends with: how to get the class report of `out_dir`."""
    return t("report_pointer", out=shlex.quote(str(out_dir)))


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, text, newline="")


def base(out_dir, target):
    """`out_dir` as a relative link from the page at `target` ("" beside it)."""
    if target is None:
        return ""
    rel = Path(os.path.relpath(Path(out_dir).resolve(), Path(target).resolve().parent)).as_posix()
    return "" if rel == "." else rel + "/"


def build(out_dir, lang, target=None):
    """(folder, per-assignment stats, the page's HTML, similar.html) of `out_dir` in `lang`, its
    links made for a page at `target` (None: OUT/report.html); raises load.NotResults."""
    from autograder.report import load, page, similar_page, stats

    folder = load.load(out_dir)
    assignments = stats.by_assignment(folder.submissions)
    section, similar_html = similar_page.build(out_dir, lang)
    return folder, assignments, page.render(folder, assignments, lang, base(out_dir, target), section), similar_html


def _cannot_write(exc, default, lang):
    where = getattr(exc, "filename", None) or default
    print(t("report_cannot_write", lang, path=where, reason=exc.strerror or type(exc).__name__), file=sys.stderr)
    return 2


def _roster(path, folder, out_dir, lang, export, changed_only=False):
    """`--roster`: (exit status, paths written, lines) of `autograder.lms.roundtrip` for this folder."""
    from autograder import config
    from autograder.lms import roundtrip

    names = sorted({s.assignment for s in folder.submissions if s.assignment})

    try:  # Canvas's column is titled as the course titles the assignment (grading.yml), where the kit has it
        cfg = config.load()
        names += [messages.title(cfg, n) for n in names if n in cfg.assignments]
    except (config.ConfigError, OSError):  # no grading.yml here (the public part): the names alone
        pass
    only = None
    if changed_only:  # the scores the last regrade moved (changes.csv), nothing else
        if folder.changes is None:
            return 2, [], [t("report_changed_only_none", lang)]
        only = {row["id"] for row in folder.changes}
    return roundtrip.run(path, folder.submissions, out_dir, lang, export, names, only)


def main(
    *,
    out_dir: str,
    out: str | None = None,
    lang: str | None = None,
    export: Sequence[str] | None = None,
    roster: str | None = None,
    changed_only: bool = False,
) -> int:
    """`report`: the class report of `out_dir` (HTML at `out`, default OUT/report.html), with LMS `export`s;
    with `roster` (the LMS's own roster file), that roster filled in as the LMS imports it (`autograder.lms`)."""
    from autograder.report import export as lms
    from autograder.report import load, similar_page, terminal

    try:
        lang = messages.normalize(lang) if lang else messages.default()
    except messages.MessageError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    if changed_only and not roster:
        print(t("report_changed_only_needs_roster", lang), file=sys.stderr)
        return 2
    written = []
    try:
        target = Path(out) if out else Path(out_dir) / "report.html"
        if roster:  # first: the page lists the roster's students with no submission (not_submitted.csv)
            folder = load.load(out_dir)
            status, paths, lines = _roster(roster, folder, out_dir, lang, export, changed_only)
            for line in lines:
                print(f"report: {line}", file=sys.stderr)
            if status:
                return status
            written += paths
        folder, assignments, html, similar_html = build(out_dir, lang, target)
    except load.NotResults as exc:
        key, fields = exc.args
        print(t(key, lang, **fields), file=sys.stderr)
        return 2
    except OSError as exc:  # the roster's files
        return _cannot_write(exc, out_dir, lang)
    try:
        _write(target, html)
        written.append(target)
        beside = target.parent / similar_page.PAGE_NAME  # the section's links point here
        _write(beside, similar_html)
        written.append(beside)
        for kind in dict.fromkeys(export or []):
            if roster:  # the roster's own file replaces the generic export
                continue
            path, counts = lms.write(kind, assignments, out_dir)
            written.append(path)
            for what, key in (
                ("no_identity", "report_export_no_identity"),
                ("blank", "report_export_blank"),
                ("duplicates", "report_export_duplicates"),
            ):
                if counts[what]:
                    print(t(key, lang, file=path.name, n=counts[what]), file=sys.stderr)
    except OSError as exc:
        return _cannot_write(exc, target, lang)
    print("\n".join(terminal.lines(folder, assignments, lang)))
    print()
    for path in written:
        print(t("report_wrote", lang, path=path))
    return 0

"""OUT/grades.csv: one row per submission, in the columns an LMS import takes.

    id, path, assignment, name, email, sid, status, reason,
    <q1>, ..., <qn>, total, <q1>_max, ..., <qn>_max, total_max

Read by name (the class report does), so the order above is part of the
format. `status` is `graded`, `partial` (graded, but part of the notebook could
not run: results.json's `flags` has not_run, over_budget or skipped_cells),
`not_graded` (the file could not be graded: its fault) or `internal_error` (the
kit failed on it: a hidden suite that does not collect, a check that raises;
never the student's fault, to be regraded once the kit is fixed); `reason` is
one line, empty when graded: for not_graded the first line of the
submission's output, for partial the flags' reasons, in the feedback's
language, for internal_error the first grader error (for the staff). name, email and sid come from a Gradescope export's
submitters (several: joined with "; "), empty when unknown.

Every row is made from the submission's results.json alone (its id, the path
it was found as, its scores), so `merge` rewrites the file byte for byte as a
single run writes it. A text cell that a spreadsheet would run as a formula
(it starts with = + - @, a tab or a carriage return) gets a leading `'`.
"""

import csv
import os

from autograder import atomic, messages, release
from autograder.grade.text import clean, display
from autograder.messages import t

CSV_NAME = "grades.csv"
INTERNAL_ERROR = "internal_error"
# Flags that mean part of the notebook could not run (the score is for what did run).
PARTIAL_FLAGS = ("not_run", "over_budget", "skipped_cells")
SUBMITTER_FIELDS = ("name", "email", "sid")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def was_graded(data):
    """Whether the judge ran the suites on it (not a file that could not be read at all)."""
    status = (data.get("extra_data") or {}).get("status")
    if status:
        return status == "graded"
    return not any(line.startswith("Not graded") for line in str(data.get("output", "")).splitlines())


def first_line(data):
    """The first line of a submission's output (why a file was not graded)."""
    return (str(data.get("output", "")).splitlines() or [""])[0]


def status(data):
    """graded, partial, not_graded or internal_error (see the module's docstring)."""
    if (data.get("extra_data") or {}).get("status") == INTERNAL_ERROR:
        return INTERNAL_ERROR
    if not was_graded(data):
        return "not_graded"
    flags = (data.get("extra_data") or {}).get("flags") or {}
    return "partial" if any(flags.get(k) for k in PARTIAL_FLAGS) else "graded"


def reason(data):
    """One line saying why a row is not simply graded; empty when it is."""
    state = status(data)
    if state == INTERNAL_ERROR:
        errors = data.get("internal_errors")
        first = str(errors[0]) if isinstance(errors, list) and errors else first_line(data)
        return display(" ".join(first.split()), 300)
    if state == "not_graded":
        return display(first_line(data), 300)
    if state == "graded":
        return ""
    ed = data.get("extra_data") or {}
    flags = ed.get("flags") or {}
    with messages.language(ed.get("language") or None):
        parts = [
            t("batch_partial_skipped", n=flags[k]) if k == "skipped_cells" else str(flags[k])
            for k in PARTIAL_FLAGS
            if flags.get(k)
        ]
    return display("; ".join(parts), 300)


def submitters(data):
    """[{name, email, sid}] the results.json names (a Gradescope export's), else []."""
    found = (data.get("extra_data") or {}).get("submitters")
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def _text(value):
    value = str(value)
    return "'" + value if value.startswith(_FORMULA_START) else value


def columns(names):
    """The header for these question columns."""
    return [
        "id",
        "path",
        "assignment",
        *SUBMITTER_FIELDS,
        "status",
        "reason",
        *names,
        "total",
        *[f"{n}_max" for n in names],
        "total_max",
    ]


def question_names(rows, cfg):
    """The question columns: every question of each assignment in the rows, in grading.yml's order."""
    names = []
    for a in cfg.assignments:
        if any(data.get("assignment") == a for _, _, data in rows):
            names += [q for q in cfg.questions(a) if q not in names]
    return names


def row(sid, path, data, names, cfg):
    """One submission's cells (see `columns`)."""
    data = clean(data)
    assignment = data.get("assignment")
    known = cfg.questions(assignment) if assignment in cfg.assignments else {}
    tests = release.scored(data.get("tests"))
    scores = {x.get("name"): x.get("score") for x in tests}
    maxes = {**{q: float(p) for q, p in known.items()}, **{x.get("name"): x.get("max_score") for x in tests}}
    people = submitters(data)
    who = ["; ".join(display(str(p.get(f) or ""), 300) for p in people) for f in SUBMITTER_FIELDS]
    total_max = float(sum(known.values())) if known else (sum(maxes.values()) if maxes else "")
    return [
        sid,
        _text(display(path)),
        assignment or "",
        *map(_text, who),
        status(data),
        _text(reason(data)),
        *[scores.get(n, "") for n in names],
        data.get("score", 0.0),
        *[maxes.get(n, "") for n in names],
        total_max,
    ]


def write_csv(out, rows, cfg):
    """OUT/grades.csv for [(id, path, results)] in that order (written whole, then renamed)."""
    names = question_names(rows, cfg)
    with atomic.replacing(os.path.join(out, CSV_NAME)) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(columns(names))
        for sid, path, data in rows:
            w.writerow(row(sid, path, data, names, cfg))

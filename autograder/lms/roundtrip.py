"""`report OUT --roster FILE`: read the roster, match, write it back, and say who is where.

The roster is read at report time, not at grade time: Moodle's importer
skips a row whose "Last modified (grade)" is older than the grade it holds,
so the worksheet to fill is the one downloaded just before the upload.

Besides the LMS's files (`writeback`), OUT/roster_match.csv lists every
student of the roster and every submission no student matched, with what
became of each: `written`, `missing` (did not submit), `not_graded`,
`refused` (an ambiguous match: the student, or the submission several students
could be) or `not_in_roster`.
"""

import csv
import io
from dataclasses import replace
from pathlib import Path

from autograder import atomic
from autograder.lms import roster as roster_mod
from autograder.lms import writeback
from autograder.messages import t

MATCH_NAME = "roster_match.csv"
NOT_SUBMITTED_NAME = "not_submitted.csv"  # read by autograder.report.load (its NOT_SUBMITTED_NAME)
KIND_NAMES = {"moodle": "Moodle", "canvas": "Canvas"}


def _who(sub):
    people = [p.get("name") or p.get("email") or p.get("sid") or "" for p in sub.identities]
    return "; ".join(p for p in people if p) or "?"


def match_table(roster, matched, written):
    """OUT/roster_match.csv's text: one row per student of the roster, then each submission of none."""
    done, missing = {s.row for s in written}, {s.row for s in matched.missing}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["lms", "lms_id", "name", "status", "submission", "score", "max_score"])
    for s in roster.students:
        sub = matched.pairs.get(s.row)
        if s.row in done:
            state = "written"
        elif sub is not None:
            state = "not_graded"
        elif s.row in missing:
            state = "missing"
        else:
            state = "refused"
        score = writeback.fmt(sub.score, 2, False) if sub is not None and sub.score is not None else ""
        top = writeback.fmt(sub.max_score, 2, False) if sub is not None and sub.questions else ""
        w.writerow([roster.kind, s.lms_id, s.name, state, sub.id if sub else "", score, top])
    for state, subs in (("refused", matched.ambiguous), ("not_in_roster", matched.unknown)):
        for sub in subs:
            w.writerow(["", "", _who(sub), state, sub.id, "", ""])
    return buf.getvalue()


def not_submitted_table(students, assignments):
    """OUT/not_submitted.csv's text (`report.load`'s columns): the roster's students with no submission."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "email", "sid", "assignment"])
    for s in students:
        w.writerow([s.name, s.email, s.sid or s.lms_id, assignments[0] if len(assignments) == 1 else ""])
    return buf.getvalue()


def run(path, submissions, out_dir, lang, export, assignment_names=(), only=None):
    """(exit status, [paths written], [lines for stderr]) of the roster at `path` against `submissions`;
    `only` (submission ids): write back those students' rows alone, the others as the LMS had them."""
    graded = sorted({s.assignment for s in submissions if s.assignment})
    if len(graded) > 1:  # a roster is one assignment's: its students would each have several submissions
        return 2, [], [t("lms_several_assignments", lang, n=len(graded), names=", ".join(graded))]
    try:
        roster = roster_mod.read(path, assignment_names)
    except roster_mod.RosterError as exc:
        return 2, [], [str(exc)]
    if export and any(e != roster.kind for e in export):
        other = next(e for e in export if e != roster.kind)
        return 2, [], [t("lms_kind_mismatch", lang, file=path, kind=KIND_NAMES[roster.kind], export=other)]
    matched = roster_mod.match(roster, submissions)
    shown = (
        matched if only is None else replace(matched, pairs={r: s for r, s in matched.pairs.items() if s.id in only})
    )
    paths, written = writeback.write(roster, shown, out_dir, lang)
    target = Path(out_dir) / MATCH_NAME
    atomic.write_text(target, match_table(roster, matched, written), newline="")
    missing = Path(out_dir) / NOT_SUBMITTED_NAME  # the report's "needs a look" lists them
    atomic.write_text(missing, not_submitted_table(matched.missing, graded), newline="")
    lines = [
        t(
            "lms_matched",
            lang,
            file=Path(path).name,
            matched=len(matched.pairs),
            students=len(roster.students),
            kind=KIND_NAMES[roster.kind],
            written=len(written),
        )
    ]
    lines += [t(key, lang, **fields) for key, fields in matched.refused]
    done = {s.row for s in written}
    for s in roster.students:
        sub = matched.pairs.get(s.row)
        if sub is not None and s.row not in done:
            lines.append(t("lms_not_scored", lang, student=s.label(roster), sub=sub.id, status=sub.status))
    lines += [t("lms_unknown", lang, sub=sub.id, who=_who(sub)) for sub in matched.unknown]
    lines += [t("lms_missing", lang, student=s.label(roster)) for s in matched.missing]
    return 0, [*paths, target, missing], lines

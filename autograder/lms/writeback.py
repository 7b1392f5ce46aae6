"""The roster filled in as its LMS imports it.

Moodle, the grading worksheet (Assignment > View all submissions > "Upload
grading worksheet"; `assignfeedback_offline`'s `importgradeslib.php` and
`locallib.php`): the importer finds its columns by their names in the
uploading user's language ("Identifier", "Grade", "Last modified (grade)",
the comments plugin's "Feedback comments"), reads the participant id after
the identifier's prefix, reads a grade with `unformat_float` (the user's
decimal separator), skips a blank grade, one above "Maximum grade", and one
whose "Last modified (grade)" is older than the grade Moodle holds (unless
"Allow updating records that have been modified more recently in Moodle" is
ticked). So every header, identifier, date and untouched row is written back
exactly as read; a matched student's Grade is their score on the roster's
scale (score / the kit's maximum x that row's "Maximum grade"), in the
roster's number format (its decimals, its decimal comma); the comments
column gets a short comment in the roster's language with the points per
question.

Moodle, the feedback files ("Upload multiple feedback files in a zip";
`assignfeedback_file`'s `importziplib.php`): each path component is split
on `_` into at most 5 parts; the first with at least 4, a numeric second
part that is a participant's id and a plugin named by the third and fourth
gives the student, and what follows the fourth part is the file's name. So
each student's feedback.html goes in `<name>_<participant id>_assignfeedback_file_/`
(the name with `_` made a space, as Moodle's own download does).

Canvas, the gradebook CSV (Grades > Import; `gradebook_importer.rb`): the
header and the `Points Possible` row as read (Canvas matches the assignment
by the `(id)` in its column's title, a student by the ID column, then SIS
User ID, SIS Login ID, then name: all kept as read); a matched student's
cell is their score on the assignment's points possible, with 2 decimals
(the precision Canvas compares at).

A student with no submission, one whose submission was not graded, and one
refused by `roster.match` keep their row as the LMS wrote it.
"""

import csv
import io
import re
import zipfile
from pathlib import Path

from autograder import atomic
from autograder.lms.roster import CANVAS, MOODLE, _number
from autograder.messages import t

WORKSHEET_NAME = "moodle_worksheet.csv"
FEEDBACK_ZIP_NAME = "moodle_feedback.zip"
CANVAS_NAME = "canvas.csv"
FEEDBACK_FILE = "feedback.html"
SCORED = ("graded", "partial")
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')  # what Moodle's clean_filename (PARAM_FILE) drops


def _decimals(text, default=2):
    text = (text or "").strip()
    for sep in (",", "."):
        if sep in text:
            return len(text.split(sep, 1)[1]) or default
    return default


def fmt(x, decimals, comma):
    text = f"{x:.{decimals}f}"
    return text.replace(".", ",") if comma else text


def scored(sub):
    return sub.status in SCORED and sub.score is not None and sub.max_score > 0


def comment(sub, grade, top, lang, comma):
    """The comment beside the grade: the grade on the roster's scale, the points, each question's."""
    n = lambda x: fmt(x, 2, comma).rstrip("0").rstrip(".,") or "0"  # noqa: E731
    questions = "; ".join(f"{q} {n(s)}/{n(m)}" for q, (s, m) in sub.questions.items())
    text = t(
        "lms_comment",
        lang,
        grade=grade,
        max=top,
        points=n(sub.score),
        total=n(sub.max_score),
        questions=questions,
    )
    return text + (" " + t("lms_comment_partial", lang) if sub.status == "partial" else "")


def _rows_text(roster, rows):
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=roster.delimiter, lineterminator="\n")
    w.writerow(roster.header)
    w.writerows(rows)
    return ("\ufeff" if roster.bom else "") + buf.getvalue()


def _cell(row, i, value):
    row = list(row) + [""] * (i + 1 - len(row))
    row[i] = value
    return row


def moodle_worksheet(roster, matched, lang=None):
    """(the worksheet's text, [participant rows written]) for Moodle's "Upload grading worksheet"."""
    assert roster.kind == MOODLE
    lang = lang or roster.language
    rows, written = [list(r) for r in roster.rows], []
    for s in roster.students:
        sub = matched.pairs.get(s.row)
        if sub is None or not scored(sub):
            continue
        row = rows[s.row]
        cell = row[roster.cols["max"]] if roster.cols["max"] < len(row) else ""
        top = _number(cell)
        if top is None or top <= 0:  # a row without its maximum: left as the LMS had it
            continue
        decimals = _decimals(cell)
        grade = fmt(
            round(min(sub.score, sub.max_score) / sub.max_score * top, decimals), decimals, roster.decimal_comma
        )
        row = _cell(row, roster.cols["grade"], grade)
        if "comments" in roster.cols:
            row = _cell(row, roster.cols["comments"], comment(sub, grade, cell.strip(), lang, roster.decimal_comma))
        rows[s.row] = row
        written.append(s)
    return _rows_text(roster, rows), written


def feedback_folder(name, participant):
    """The zip folder Moodle's feedback importer files under participant `participant`."""
    clean = " ".join(_UNSAFE.sub(" ", (name or "").replace("_", " ")).split()) or "Participant"
    return f"{clean}_{participant}_assignfeedback_file_"


def moodle_feedback_zip(roster, matched, out_dir, target):
    """Write the zip of feedback files at `target`; returns how many students it holds."""
    assert roster.kind == MOODLE
    n = 0
    with atomic.replacing(target) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for s in roster.students:
            sub = matched.pairs.get(s.row)
            page = Path(out_dir) / sub.id / FEEDBACK_FILE if sub is not None else None
            if page is None or sub.status == "internal_error" or not page.is_file():
                continue
            zf.writestr(f"{feedback_folder(s.name, s.lms_id)}/{FEEDBACK_FILE}", page.read_bytes())
            n += 1
    return n


def canvas_csv(roster, matched):
    """(the gradebook CSV's text, [students written]) for Canvas's Grades > Import."""
    assert roster.kind == CANVAS
    rows, written = [list(r) for r in roster.rows], []
    for s in roster.students:
        sub = matched.pairs.get(s.row)
        if sub is None or not scored(sub):
            continue
        top = roster.points if roster.points else sub.max_score
        value = round(min(sub.score, sub.max_score) / sub.max_score * top, 2)
        rows[s.row] = _cell(rows[s.row], roster.cols["grade"], fmt(value, 2, roster.decimal_comma))
        written.append(s)
    return _rows_text(roster, rows), written


def write(roster, matched, out_dir, lang=None):
    """Write what `roster`'s LMS imports into `out_dir`; returns ([paths written], [students written])."""
    out = Path(out_dir)
    if roster.kind == MOODLE:
        text, written = moodle_worksheet(roster, matched, lang)
        atomic.write_text(out / WORKSHEET_NAME, text, newline="")
        moodle_feedback_zip(roster, matched, out, out / FEEDBACK_ZIP_NAME)
        return [out / WORKSHEET_NAME, out / FEEDBACK_ZIP_NAME], written
    text, written = canvas_csv(roster, matched)
    atomic.write_text(out / CANVAS_NAME, text, newline="")
    return [out / CANVAS_NAME], written

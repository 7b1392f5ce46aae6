"""The LMS's roster as its own export writes it, and which graded submission is whose.

Two files are read, each as the LMS writes it (the rules: `writeback`):

- Moodle's offline grading worksheet (Assignment > View all submissions >
  "Download grading worksheet"): one row per participant; the columns are
  named in the language of the Moodle that wrote it (a pt_br Moodle writes
  "Identificador", "Nome completo", "Nota", "Nota máxima", ...), so columns
  are found by those names in English and Portuguese, and every header, row
  and cell not written back is kept exactly as read. The participant id is
  the number that ends the identifier ("Participant 123456", "Participante123456").
- Canvas's gradebook CSV (Grades > Export): `Student, ID, SIS User ID, SIS
  Login ID, [Integration ID], [Root Account], Section`, one column per
  assignment titled `Name (id)`, then the course's totals; a `Points
  Possible` row (and, with manual posting, a `Manual Posting` row) under the
  header.

Matching (`match`): a submission whose file the LMS named (`layouts`: the
Moodle participant id, the Canvas user id) is matched by that id first; else
(or when the roster has no such id) by e-mail where both have one, then by
the exact name (case, accents as written, spacing ignored). Two submissions
for one student, or a name shared by two students of the roster, are refused
with one line each: that student's row is left as the LMS had it.
"""

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

MOODLE = "moodle"
CANVAS = "canvas"
MAX_ROSTER_BYTES = 32 * 1024 * 1024

# Moodle's language strings (mod/assign/lang/<lang>/assign.php, lang/<lang>/moodle.php, assignfeedback_comments)
MOODLE_COLUMNS = {
    "id": ("Identifier", "Identificador"),
    "name": ("Full name", "Nome completo"),
    "email": ("Email address", "Endereço de email", "Endereço de e-mail", "E-mail"),
    "sid": ("ID number", "Número de identificação", "Número de identificação (ID)"),
    "grade": ("Grade", "Nota"),
    "max": ("Maximum grade", "Maximum Grade", "Nota máxima"),
    "modified": ("Last modified (grade)", "Última modificação (nota)"),
    "comments": ("Feedback comments", "Comentários de feedback", "Comentários do feedback"),
}
PORTUGUESE = {names[1] for names in MOODLE_COLUMNS.values()} - {"E-mail"}
CANVAS_INFO = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Root Account", "Section")
CANVAS_TOTALS = (  # gradebook_importer.rb's NON_ASSIGNMENT_COLUMN_HEADERS (also "Unposted ..." ones)
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
)
_CANVAS_TITLE = re.compile(r"^(?P<title>.*?)\s*\((?P<id>\d+)\)\s*$")
_PARTICIPANT = re.compile(r"(\d+)\s*$")
_NUMBER = re.compile(r"^\s*-?\d+(?:[.,]\d+)?\s*$")


class RosterError(Exception):
    """The roster cannot be used; the message is one line."""


@dataclass
class Student:
    row: int  # index into Roster.rows
    name: str
    lms_id: str  # the Moodle participant id, the Canvas user id ("" if none)
    email: str = ""
    sid: str = ""

    def label(self, roster):
        ident = roster.rows[self.row][roster.cols["id"]] if "id" in roster.cols else self.lms_id
        return f"{self.name or '?'} ({ident})" if ident else (self.name or f"row {self.row + 2}")


@dataclass
class Roster:
    kind: str
    path: str
    header: list
    rows: list  # every row under the header, as read
    delimiter: str
    bom: bool
    cols: dict  # role -> column index
    students: list = field(default_factory=list)
    fixed: set = field(default_factory=set)  # rows that are not students (Canvas's Points Possible, Manual Posting)
    language: str = "en"
    decimal_comma: bool = False
    column: str = ""  # Canvas: the assignment's column header
    points: float | None = None  # Canvas: that assignment's points possible


def _number(text):
    """A number from a cell written with a decimal point or comma, or None."""
    text = (text or "").strip()
    if not _NUMBER.match(text):
        return None
    return float(text.replace(",", "."))


def _key(name):
    """A name as `match` compares it: NFC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", name or "").casefold().split())


def _read_rows(path):
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_ROSTER_BYTES:
            raise RosterError(f"{path}: {size >> 20} MB, larger than a roster ({MAX_ROSTER_BYTES >> 20} MB)")
        raw = p.read_bytes()
    except OSError as exc:
        raise RosterError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", "replace")  # an Excel-saved roster: Moodle's importer takes an encoding too
    first = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first.count)
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as exc:
        raise RosterError(f"{path}: not a CSV file ({exc})") from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise RosterError(f"{path}: empty")
    return rows[0], rows[1:], delimiter, bom


def _find(header, names):
    wanted = {n.casefold() for n in names}
    return next((i for i, h in enumerate(header) if h.strip().casefold() in wanted), None)


def read(path, assignment_names=()):
    """The Roster in `path` (Moodle's grading worksheet or Canvas's gradebook CSV), or RosterError.

    `assignment_names`: the graded assignments' names and titles (Canvas: which column is theirs)."""
    header, rows, delimiter, bom = _read_rows(path)
    if len(header) > 3 and "Student" in header[0] and "ID" in header[1]:
        roster = Roster(CANVAS, str(path), header, rows, delimiter, bom, {})
        _canvas(roster, assignment_names)
    elif _find(header, MOODLE_COLUMNS["id"]) is not None:
        roster = Roster(MOODLE, str(path), header, rows, delimiter, bom, {})
        _moodle(roster)
    else:
        shown = ", ".join(h[:30] for h in header[:6])
        raise RosterError(
            f"{path}: neither Moodle's grading worksheet (no 'Identifier' column) nor Canvas's gradebook CSV "
            f"(it starts 'Student, ID'); its header: {shown}"
        )
    return roster


def _moodle(roster):
    header = roster.header
    cols = {role: i for role, names in MOODLE_COLUMNS.items() if (i := _find(header, names)) is not None}
    for role in ("grade", "modified"):  # importgradeslib.php refuses a worksheet without these
        if role not in cols:
            names = " / ".join(MOODLE_COLUMNS[role])
            raise RosterError(f"{roster.path}: Moodle's worksheet needs its column {names}; download it again")
    if "max" not in cols:  # gradingtable.php writes "Scale" instead: a grade is then a scale's word, not a number
        raise RosterError(
            f"{roster.path}: no 'Maximum grade' / 'Nota máxima' column: the assignment grades on a scale; "
            "give it a point grade (Type: Point) to take the kit's scores"
        )
    roster.cols = cols
    roster.language = "pt-BR" if any(h.strip() in PORTUGUESE for h in header) else "en"
    numbers = [r[c] for r in roster.rows for c in (cols.get("max"), cols["grade"]) if c is not None and c < len(r)]
    roster.decimal_comma = any("," in x for x in numbers if _number(x) is not None)
    for n, row in enumerate(roster.rows):
        ident = row[cols["id"]] if cols["id"] < len(row) else ""
        m = _PARTICIPANT.search(ident)
        if not m:
            raise RosterError(f"{roster.path}: row {n + 2}: identifier {ident[:40]!r} ends in no participant number")
        cell = lambda role, row=row: row[cols[role]].strip() if role in cols and cols[role] < len(row) else ""  # noqa: E731
        roster.students.append(Student(n, cell("name"), m.group(1), cell("email"), cell("sid")))


def _canvas(roster, assignment_names):
    header = roster.header
    info = [i for i, h in enumerate(header) if h.strip() in CANVAS_INFO]
    roster.cols = {role: i for role, i in (("name", 0), ("id", 1)) if i < len(header)}
    for role, name in (("sis_user", "SIS User ID"), ("sis_login", "SIS Login ID"), ("section", "Section")):
        if (i := _find(header, (name,))) is not None:
            roster.cols[role] = i
    if "section" not in roster.cols:  # gradebook_importer.rb: the last student column is "Section"
        raise RosterError(f"{roster.path}: Canvas's gradebook CSV has a 'Section' column after the students' ids")
    candidates = [
        i
        for i, h in enumerate(header)
        if i > max(info, default=1) and h.strip() and not any(t in h for t in CANVAS_TOTALS) and "(read only)" not in h
    ]
    roster.column, index = _assignment_column(roster, candidates, assignment_names)
    roster.cols["grade"] = index
    for n, row in enumerate(roster.rows):
        first = row[0] if row else ""
        if "Points Possible" in first:
            roster.fixed.add(n)
            roster.points = _number(row[index]) if index < len(row) else None
            roster.decimal_comma = "," in (row[index] if index < len(row) else "")
        elif all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            roster.fixed.add(n)
        else:
            cell = lambda i, row=row: row[i].strip() if i is not None and i < len(row) else ""  # noqa: E731
            sis_user, sis_login = cell(roster.cols.get("sis_user")), cell(roster.cols.get("sis_login"))
            roster.students.append(Student(n, cell(0), cell(1), email=sis_login, sid=sis_user))


def _assignment_column(roster, candidates, assignment_names):
    """(header, index) of the assignment's column: the only one, or the one titled as the assignment."""
    if not candidates:
        raise RosterError(f"{roster.path}: Canvas's gradebook CSV has no assignment column")
    if len(candidates) == 1:
        i = candidates[0]
        return roster.header[i], i
    wanted = {_key(n) for n in assignment_names if n}
    hits = []
    for i in candidates:
        m = _CANVAS_TITLE.match(roster.header[i])
        title = m.group("title") if m else roster.header[i]
        if _key(title) in wanted:
            hits.append(i)
    if len(hits) == 1:
        return roster.header[hits[0]], hits[0]
    shown = "; ".join(roster.header[i][:40] for i in candidates[:6])
    raise RosterError(
        f"{roster.path}: {len(candidates)} assignment columns ({shown}) and {'none' if not hits else 'several'} "
        f"titled as the assignment graded; delete the other columns (Canvas imports the columns the file has)"
    )


# -- matching ---------------------------------------------------------------------
@dataclass
class Match:
    pairs: dict  # Student.row -> submission
    missing: list  # students with no submission
    unknown: list  # submissions no student of the roster matches
    refused: list  # (message key, fields): an ambiguous match, one line each; the rows stay as the LMS had them
    ambiguous: list = field(default_factory=list)  # submissions that several students of the roster could be


def _candidates(roster, identity, by_id, by_email, by_name):
    if identity.get("lms") == roster.kind and identity.get("lms_id") in by_id:
        return by_id[identity["lms_id"]], "id"
    if identity.get("email") and _key(identity["email"]) in by_email:
        return by_email[_key(identity["email"])], "email"
    return by_name.get(_key(identity.get("name")), []), "name"


def match(roster, submissions):
    """The Match of `submissions` (objects with `id` and `identities` [{name, email, sid, lms, lms_id}])."""
    by_id, by_email, by_name = {}, {}, {}
    for s in roster.students:
        if s.lms_id:
            by_id.setdefault(s.lms_id, []).append(s)
        if s.email:
            by_email.setdefault(_key(s.email), []).append(s)
        if _key(s.name):
            by_name.setdefault(_key(s.name), []).append(s)
    refused, unknown, ambiguous, claims = [], [], [], {}
    for sub in submissions:
        hit = False
        for person in sub.identities or [{"name": ""}]:
            found, how = _candidates(roster, person, by_id, by_email, by_name)
            if len(found) > 1:
                shown = person.get("lms_id") if how == "id" else person.get(how) or person.get("name")
                refused.append(("lms_refused_shared", {"sub": sub.id, "n": len(found), "how": how, "value": shown}))
                ambiguous.append(sub)
                hit = True
            elif found:
                claims.setdefault(found[0].row, []).append(sub)
                hit = True
        if not hit:
            unknown.append(sub)
    pairs, by_row = {}, {s.row: s for s in roster.students}
    for row, subs in claims.items():
        if len({id(s) for s in subs}) > 1:
            ids = ", ".join(sorted(s.id for s in subs))
            refused.append(("lms_refused_several", {"student": by_row[row].label(roster), "n": len(subs), "ids": ids}))
        else:
            pairs[row] = subs[0]
    taken = set(claims)
    missing = [s for s in roster.students if s.row not in taken]
    return Match(pairs, missing, unknown, refused, ambiguous)

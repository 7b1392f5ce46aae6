"""Read a graded folder (`grade --out OUT`): every `OUT/<id>/results.json` and
`OUT/grades.csv`, checked, into one `Submission` per id.

Nothing here is trusted blindly: a results.json that is missing, too large,
not JSON, or whose scores are not numbers makes its submission `unreadable`
(listed under "needs a look" with the reason, never a crash); a malformed
auxiliary part (checks, causes, flags, submitters) is dropped with a reason.
grades.csv is read by column name and accepts both its layouts: the older
`id, path, <q...>, total` and `id, path, assignment, name, email, sid, status,
reason, <q...>, total, <q>_max..., total_max`. Where results.json cannot be
read, grades.csv's row still gives the scores, so the statistics agree with
the file the LMS gets.

Beside them, two optional files: `changes.csv` (the scores the last `grade
--resume` moved, `autograder.grade.changes`) and `not_submitted.csv` (`name,
email, sid, assignment`: a roster's students with no submission, each a
`NotSubmitted` row under "needs a look"); one that cannot be read is a problem
of the folder, never a crash.

Reasons are kept as (catalog key, fields) and worded later, in the report's
language.
"""

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from autograder import release

RESULTS = "results.json"
CSV_NAME = "grades.csv"
FEEDBACK = "feedback.html"
CHANGES_NAME = "changes.csv"  # `grade --resume`'s scores that moved (`autograder.grade.changes`)
CHANGES_COLUMNS = ("id", "student", "question", "old_score", "new_score", "why")
NOT_SUBMITTED_NAME = "not_submitted.csv"  # a roster's students with no submission: name, email, sid, assignment
MAX_RESULTS_BYTES = 20 * 1024 * 1024  # the judge writes under 200 kB; anything near this is not ours
MAX_CSV_BYTES = 64 * 1024 * 1024
MAX_REASON = 300
MAX_NAME = 120  # a question, check or assignment name (the suites' are under 40)
STATUSES = ("graded", "partial", "not_graded", "internal_error")
CSV_META = ("id", "path", "assignment", "name", "email", "sid", "status", "reason", "total", "total_max")
PARTIAL_FLAGS = ("not_run", "over_budget", "skipped_cells")  # part of the notebook could not run


@dataclass
class Submission:
    """One graded file as the report sees it. `questions`: {name: [score, max]} in the
    order the suites ran them; `checks`/`causes`: results.json's records (empty when
    absent); `reasons`: [(catalog key, fields)] for "needs a look"."""

    id: str
    assignment: str | None = None
    status: str = "unreadable"  # graded | partial | not_graded | internal_error | unreadable
    score: float | None = None
    questions: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    causes: list = field(default_factory=list)
    has_checks: bool = False
    language: str | None = None
    identities: list = field(default_factory=list)  # [{name, email, sid}]
    reasons: list = field(default_factory=list)
    feedback: bool = False  # OUT/<id>/feedback.html is there to link to

    @property
    def scored(self):
        """Counts in the statistics: graded, in full or in part, with scores to count."""
        return self.status in ("graded", "partial") and self.score is not None

    @property
    def max_score(self):
        return sum(m for _, m in self.questions.values())


@dataclass
class NotSubmitted:
    """A student a roster lists with no submission (a row of OUT/not_submitted.csv)."""

    name: str = ""
    email: str = ""
    sid: str = ""
    assignment: str = ""


@dataclass
class Folder:
    submissions: list  # by id
    problems: list  # [(key, fields)] about the folder itself (grades.csv)
    changes: list | None = None  # changes.csv's rows ({column: text}); None: no regrade recorded
    not_submitted: list = field(default_factory=list)  # [NotSubmitted]


class NotResults(Exception):
    """The folder is not one `grade` wrote; the message is a catalog key and its fields."""


def _clip(text, limit=MAX_REASON):
    from autograder.text import one_line

    return one_line(text, limit)


def _number(value):
    """A finite float from a JSON or CSV value, else None (bool is not a number here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and value.strip():
        try:
            x = float(value.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _no_constants(name):
    raise ValueError(f"{name} is not a number JSON allows")


def read_results(path):
    """The parsed results.json at `path` (a dict), or raise ValueError with a one-line reason."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(exc.strerror or type(exc).__name__) from None
    if size > MAX_RESULTS_BYTES:
        raise ValueError(f"{size // (1024 * 1024)} MB, more than a results.json of the kit ever holds")
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(_clip(f"{type(exc).__name__}: {exc}")) from None
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object")
    return data


def _tests(data):
    """{question: [score, max]} from results.json `tests`, or raise ValueError."""
    tests = data.get("tests")
    if not isinstance(tests, list):
        raise ValueError("`tests` is not a list")
    out = {}
    for n, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("name"), str):
            raise ValueError(f"`tests[{n}]` has no name")
        if release.later_view(test):  # a question's feedback after the deadline: its score is the test before
            continue
        score, top = _number(test.get("score")), _number(test.get("max_score"))
        if score is None or top is None or top < 0:
            raise ValueError(f"`tests[{n}]` ({_clip(test['name'], 60)}) has no numeric score and max_score")
        out[_clip(test["name"], MAX_NAME)] = [score, top]
    return out


def _checks(extra):
    checks = extra.get("checks")
    if checks is None:
        return None
    ok = isinstance(checks, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("question"), str)
        and isinstance(c.get("check"), str)
        and _number(c.get("failed")) is not None
        and not isinstance(c.get("failed"), str)
        and isinstance(c.get("causes", []), list)
        for c in checks
    )
    if not ok:
        raise ValueError("checks")
    return [{**c, "question": _clip(c["question"], MAX_NAME), "check": _clip(c["check"], MAX_NAME)} for c in checks]


def _causes(extra):
    causes = extra.get("causes")
    if causes is None:
        return None
    ok = isinstance(causes, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("text"), str)
        and (c.get("key") is None or isinstance(c.get("key"), str))
        and (c.get("fields") is None or isinstance(c.get("fields"), dict))
        and isinstance(c.get("questions", []), list)
        for c in causes
    )
    if not ok:
        raise ValueError("causes")
    return causes


def _identities(value):
    """[{name, email, sid[, lms, lms_id]}] from results.json `submitters`, or raise ValueError."""
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise ValueError("submitters")
    people = []
    for p in value:
        person = {
            k: _clip(p[k], 200) if isinstance(p.get(k), (str, int)) and not isinstance(p.get(k), bool) else ""
            for k in ("name", "email", "sid")
        }
        if any(person.values()):
            # the LMS that named the file, and its id for the student (`autograder.lms.layouts`)
            if p.get("lms") in ("moodle", "canvas") and isinstance(p.get("lms_id"), str) and p["lms_id"].isdigit():
                person.update(lms=p["lms"], lms_id=p["lms_id"][:40])
            people.append(person)
    return people


def _flag_reasons(flags, internal_errors):
    """(key, fields) for each flag a person should look at."""
    out = []
    if flags.get("not_graded"):
        out.append(("report_look_not_graded", {"reason": _clip(flags["not_graded"])}))
    if flags.get("not_run"):
        out.append(("report_look_not_run", {"reason": _clip(flags["not_run"])}))
    if flags.get("over_budget"):
        out.append(("report_look_over_budget", {"reason": _clip(flags["over_budget"])}))
    for name, key in (
        ("skipped_cells", "report_look_skipped_cells"),
        ("cell_errors", "report_look_cell_errors"),
        ("notes", "report_look_notes"),
    ):
        n = _number(flags.get(name))
        if n:
            out.append((key, {"n": int(n)}))
    if flags.get("untouched"):
        out.append(("report_look_untouched", {}))
    if isinstance(flags.get("metadata_assignment"), str):
        out.append(("report_look_metadata", {"meta": _clip(flags["metadata_assignment"], 80)}))
    if internal_errors:
        out.append(("report_look_internal_errors", {"n": int(internal_errors)}))
    return out


def from_results(sub, data):
    """Fill `sub` from a parsed results.json; raise ValueError (reason) when its scores cannot be used."""
    sub.questions = _tests(data)
    score = _number(data.get("score"))
    sub.score = score if score is not None else sum(s for s, _ in sub.questions.values())
    extra = data.get("extra_data")
    extra = extra if isinstance(extra, dict) else {}
    if isinstance(data.get("assignment"), str) and data["assignment"].strip():
        sub.assignment = _clip(data["assignment"], MAX_NAME)
    status = extra.get("status")
    sub.status = status if status in ("graded", "not_graded", "internal_error") else "graded"
    sub.language = extra.get("language") if isinstance(extra.get("language"), str) else None
    for part, reader in (("checks", _checks), ("causes", _causes)):
        try:
            value = reader(extra)
        except ValueError:
            sub.reasons.append(("report_look_malformed", {"part": part}))
            continue
        if value is not None:
            setattr(sub, part, value)
            if part == "checks":
                sub.has_checks = True
    flags = extra.get("flags") if isinstance(extra.get("flags"), dict) else {}
    if extra.get("flags") is not None and not isinstance(extra.get("flags"), dict):
        sub.reasons.append(("report_look_malformed", {"part": "flags"}))
    if sub.status == "graded" and any(flags.get(k) for k in PARTIAL_FLAGS):
        sub.status = "partial"
    internal = _number(extra.get("internal_errors")) or 0
    if not internal and isinstance(data.get("internal_errors"), list):
        internal = len(data["internal_errors"])
    if sub.status == "internal_error":  # first: the kit failed, the scores are not final (it counts the errors)
        sub.reasons.insert(0, ("report_look_internal_error", {"n": int(internal) or 1}))
        internal = 0
    sub.reasons += _flag_reasons(flags, internal)
    if sub.status == "not_graded" and not flags.get("not_graded"):
        first = str(data.get("output") or "").strip().splitlines()
        sub.reasons.insert(
            0, ("report_look_not_graded", {"reason": _clip(first[0]) if first else ("report_reason_unknown", {})})
        )
    if "submitters" in extra:
        try:
            sub.identities = _identities(extra["submitters"])
        except ValueError:
            sub.reasons.append(("report_look_malformed", {"part": "submitters"}))


def read_csv(path):
    """(rows {id: {column: value}}, question columns in order) of grades.csv; raise ValueError."""
    size = path.stat().st_size
    if size > MAX_CSV_BYTES:
        raise ValueError(f"{size // (1024 * 1024)} MB")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(_clip(f"{type(exc).__name__}: {exc}")) from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        rows = list(reader)
    except csv.Error as exc:
        raise ValueError(_clip(f"csv: {exc}")) from None
    if "id" not in header:
        raise ValueError("no `id` column")
    questions = [h for h in header if h and h not in CSV_META and not h.endswith("_max") and len(h) <= MAX_NAME]
    out = {}
    for row in rows:
        rid = (row.get("id") or "").strip()
        if rid:
            out[rid] = {k: (v if isinstance(v, str) else "") for k, v in row.items() if k is not None}
    return out, questions


def _split(value):
    return [p.strip() for p in (value or "").split(";")]


def _csv_identities(row):
    """[{name, email, sid}] from grades.csv's columns (several submitters are joined with "; ")."""
    names, emails, sids = _split(row.get("name")), _split(row.get("email")), _split(row.get("sid"))
    n = max(len(names), len(emails), len(sids))
    people = []
    for i in range(n):
        person = {
            k: _clip(v[i] if i < len(v) else "", 200) for k, v in (("name", names), ("email", emails), ("sid", sids))
        }
        if any(person.values()):
            people.append(person)
    return people


def apply_csv(sub, row, questions, read_json):
    """Take from grades.csv's row what results.json did not give (or cannot: its status and reason)."""
    if not sub.identities:
        sub.identities = _csv_identities(row)
    if not sub.assignment and (row.get("assignment") or "").strip():
        sub.assignment = _clip(row["assignment"], MAX_NAME)
    status, reason = (row.get("status") or "").strip(), _clip(row.get("reason") or "")
    flagged = {k for k, _ in sub.reasons}
    if status in STATUSES and read_json:
        if status == "partial" and sub.status == "graded":
            sub.status = "partial"
        if status == "partial" and not flagged & {
            "report_look_not_run",
            "report_look_over_budget",
            "report_look_skipped_cells",
        }:
            sub.reasons.insert(0, ("report_look_partial", {"reason": reason or ("report_reason_unknown", {})}))
        if status == "not_graded" and sub.status != "not_graded":
            sub.status = "not_graded"
            if "report_look_not_graded" not in flagged:
                sub.reasons.insert(0, ("report_look_not_graded", {"reason": reason or ("report_reason_unknown", {})}))
    if read_json:
        total = _number(row.get("total"))
        if total is not None and sub.score is not None and abs(total - sub.score) > 0.005:
            sub.reasons.append(("report_look_csv_mismatch", {"csv": _fmt(total), "json": _fmt(sub.score)}))
        return
    # results.json could not be read: grades.csv's row is all there is
    scores = {}
    for q in questions:
        cell = (row.get(q) or "").strip()
        if not cell:
            continue  # a question of another assignment (several in one folder)
        value, top = _number(cell), _number(row.get(f"{q}_max"))
        if value is None:
            sub.reasons.append(("report_look_csv_value", {"column": _clip(q, 80)}))
            return
        scores[q] = [value, top if top is not None else float("nan")]
    if not scores or any(math.isnan(m) for _, m in scores.values()) or not sub.assignment:
        return  # without max columns and an assignment, the row cannot be placed in the statistics
    sub.questions = scores
    total = _number(row.get("total"))
    sub.score = total if total is not None else sum(s for s, _ in scores.values())
    sub.status = status if status in STATUSES else "graded"
    if status == "internal_error":
        sub.reasons.insert(0, ("report_look_internal_error", {"n": 1}))
    elif status == "not_graded":
        sub.reasons.insert(0, ("report_look_not_graded", {"reason": reason or ("report_reason_unknown", {})}))
    elif status == "partial":
        sub.reasons.insert(0, ("report_look_partial", {"reason": reason or ("report_reason_unknown", {})}))


def _fmt(x):
    return f"{x:.2f}".rstrip("0").rstrip(".")


def load(out_dir):
    """The `Folder` of `out_dir`; raise NotResults when it is not one `grade` wrote."""
    out = Path(out_dir)
    if not out.is_dir():
        raise NotResults("report_not_a_folder", {"path": str(out_dir)})
    problems, rows, questions, csv_ok = [], {}, [], False
    csv_path = out / CSV_NAME
    if csv_path.is_file():
        try:
            rows, questions = read_csv(csv_path)
            csv_ok = True
        except (OSError, ValueError) as exc:
            problems.append(("report_look_bad_csv", {"reason": _clip(exc)}))
    else:
        problems.append(("report_look_no_csv", {}))
    try:
        folders = {p.name for p in out.iterdir() if p.is_dir() and (p / RESULTS).exists()}
    except OSError:
        raise NotResults("report_not_a_folder", {"path": str(out_dir)}) from None
    if not folders and not rows:
        raise NotResults("report_nothing", {"path": str(out_dir)})
    subs = []
    for sid in sorted(folders | set(rows)):
        sub = Submission(sid)
        read_json = False
        if sid in folders:  # a folder found in OUT: a grades.csv id alone never becomes a path
            try:
                from_results(sub, read_results(out / sid / RESULTS))
                read_json = True
            except ValueError as exc:
                sub.status, sub.questions, sub.score = "unreadable", {}, None
                sub.reasons.insert(0, ("report_look_unreadable", {"reason": _clip(exc)}))
        else:
            sub.reasons.append(("report_look_missing", {}))
        if sid in rows:
            apply_csv(sub, rows[sid], questions, read_json)
        elif csv_ok:
            sub.reasons.append(("report_look_not_in_csv", {}))
        sub.feedback = sid in folders and (out / sid / FEEDBACK).is_file()
        subs.append(sub)
    changes = _side_csv(out / CHANGES_NAME, CHANGES_COLUMNS, "report_look_bad_changes", problems)
    missing = _side_csv(
        out / NOT_SUBMITTED_NAME, ("name", "email", "sid", "assignment"), "report_look_bad_roster", problems
    )
    people = [
        NotSubmitted(**{k: _clip(r.get(k) or "", 200) for k in ("name", "email", "sid", "assignment")})
        for r in missing or []
    ]
    return Folder(subs, problems, changes, [p for p in people if p.name or p.email or p.sid])


def _side_csv(path, columns, bad, problems):
    """The rows ({column: text}) of a CSV `grade` writes beside grades.csv; None when absent,
    and a problem (`bad`) when it cannot be read or lacks a column."""
    if not path.is_file():
        return None
    try:
        text = path.read_bytes()[:MAX_CSV_BYTES].decode("utf-8-sig")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = list(reader)
        lacking = [c for c in columns if c not in (reader.fieldnames or [])]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        problems.append((bad, {"reason": _clip(f"{type(exc).__name__}: {exc}")}))
        return None
    if lacking:
        problems.append((bad, {"reason": f"no column {lacking[0]}"}))
        return None
    return [{c: _clip(r.get(c) or "", 200) for c in columns} for r in rows]

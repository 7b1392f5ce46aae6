"""Grades as the CSV an LMS imports: OUT/canvas.csv or OUT/moodle.csv.

One row per student, one column per assignment in the folder (its total). A
student is who results.json's `submitters` or grades.csv's name/email/sid
name (a group submission gives each of its submitters the grade); a
submission with neither gets a row under the kit's id, counted in a warning
on stderr. A submission not graded is left blank (an LMS leaves a blank cell
unchanged), counted in a warning too; a student with several submissions for
one assignment keeps the highest.

Canvas (Grades > Import): the header `Student, ID, SIS User ID, SIS Login ID,
Section`, then one column per assignment; a second row `Points Possible`
gives each assignment's points (Canvas's gradebook importer reads that row,
as its own export writes it). Canvas matches a row by ID (Canvas's user id,
which the kit does not know: blank), then SIS User ID (the student id),
then SIS Login ID (the email), then the name. An assignment column whose
title matches no assignment creates one.

Moodle (Grades > Import > CSV file): columns `Email address`, `ID number`,
`Full name`, then one per assignment. On import, "Identify user by": map
`Email address` to "Email address" (or `ID number` to "ID number"), and map
each assignment column to its grade item (or a new one).
"""

import csv
import io
from pathlib import Path

from autograder import atomic
from autograder.report import words

FORMATS = ("canvas", "moodle")


def _person_key(person):
    for field in ("sid", "email", "name"):
        if person.get(field):
            return (field, person[field].strip().lower())
    return None


def rows(assignments):
    """(people: {key: {"person": {...}, "scores": {assignment: score or None}}}, warnings counts)."""
    people, no_identity, blank, duplicates = {}, 0, 0, set()
    for a in assignments:
        if a.name is None:
            continue
        for s in a.submissions:
            score = s.score if s.scored else None
            blank += score is None
            keyed = [(_person_key(p), p) for p in s.identities if _person_key(p)]
            if not keyed:
                no_identity += 1
                keyed = [(("id", s.id), {"name": s.id, "email": "", "sid": ""})]
            for key, person in keyed:
                entry = people.setdefault(key, {"person": person, "scores": {}})
                value = score
                if a.name in entry["scores"]:
                    duplicates.add((key, a.name))
                    old = entry["scores"][a.name]
                    value = old if value is None else value if old is None else max(old, value)
                entry["scores"][a.name] = value
    return people, {"no_identity": no_identity, "blank": blank, "duplicates": len(duplicates)}


def _cell(text):
    """A name, email or id as a spreadsheet shows it, never as a formula (CSV injection:
    a student named "=HYPERLINK(...)"): a leading = + - @ tab or CR gets a quote mark."""
    text = str(text or "")
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _sorted(people):
    return sorted(people.items(), key=lambda kv: ((kv[1]["person"]["name"] or "").lower(), kv[0]))


def _score(x):
    return "" if x is None else words.num(x, 4)


def canvas(assignments):
    """canvas.csv's text."""
    names = [a.name for a in assignments if a.name is not None]
    people, counts = rows(assignments)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *names])
    w.writerow(
        [
            "Points Possible",
            "",
            "",
            "",
            "",
            *[words.num(a.summary.maximum, 4) for a in assignments if a.name is not None],
        ]
    )
    for _, entry in _sorted(people):
        p = entry["person"]
        w.writerow(
            [
                _cell(p["name"]),
                "",
                _cell(p["sid"]),
                _cell(p["email"]),
                "",
                *[_score(entry["scores"].get(n)) for n in names],
            ]
        )
    return buf.getvalue(), counts


def moodle(assignments):
    """moodle.csv's text."""
    names = [a.name for a in assignments if a.name is not None]
    people, counts = rows(assignments)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Email address", "ID number", "Full name", *names])
    for _, entry in _sorted(people):
        p = entry["person"]
        w.writerow(
            [_cell(p["email"]), _cell(p["sid"]), _cell(p["name"]), *[_score(entry["scores"].get(n)) for n in names]]
        )
    return buf.getvalue(), counts


def write(kind, assignments, out_dir):
    """Write OUT/<kind>.csv; returns (its path, the warning counts)."""
    text, counts = {"canvas": canvas, "moodle": moodle}[kind](assignments)
    path = Path(out_dir) / f"{kind}.csv"
    atomic.write_text(path, text, newline="")
    return path, counts

"""Who submitted a file, from the name Moodle or Canvas gave it in a class download.

Moodle's "Download all submissions" (mod/assign: `downloader.php` from 4.1,
`locallib.php`'s `download_submissions` before) names each student's files
after a prefix `<full name>_<participant id>` (underscores in the name become
spaces, so the first `_` ends the name; anonymous marking writes
"Participant" for the name), then the plugin:

    <prefix>_assignsubmission_file/<file>     folders, Moodle 4.1 and later
    <prefix>_assignsubmission_file_/<file>    folders, Moodle 3.1 to 4.0
    <prefix>_assignsubmission_file_<file>     one flat folder ("Download submissions in folders" off)

Canvas's "Download Submissions" (`ContentZipper#zip_assignment`) names each
file `<name>_<user id>_<attachment id>_<file name>`, with `LATE` after the
name when the submission was late (`<name>_LATE_<id>_...`; older Canvas:
`<name>-late_<id>_...`); the name is the student's sortable name with
`_<digits>_` replaced, so the first `_<digits>_<digits>_` holds the ids.

A name is taken as a download's only where every submission file under the
same folder argument (or class zip) follows one layout: a course's own files
named `hw_2024_01_x.ipynb` are not mistaken for Canvas's.

A class download as a zip is told from a student's otter export zip by its
members: every notebook or zip in it sits under a name of one layout; and
only a zip given by name can be one (a zip found in a folder is a student's
file). `expand` unpacks such a zip (only those members, each within
`limits.notebook_file_mb`, never outside its folder) into OUT/.lms/, where
`grade` finds them as it finds the files of a folder.
"""

import hashlib
import os
import re
import shutil
import zipfile
from collections.abc import Callable, Iterable, Sequence

from autograder.grade.text import display
from autograder.messages import t

MOODLE = "moodle"
CANVAS = "canvas"
SUFFIXES = (".ipynb", ".zip")
SKIP = ("__MACOSX", ".ipynb_checkpoints")
UNPACKED = ".lms"  # OUT/.lms/<zip>-<hash>/: class zips unpacked
MAX_MEMBERS = 20000

_MOODLE = re.compile(r"^(?P<name>[^_/]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)(?:_(?P<rest>.*))?$")
_CANVAS = re.compile(r"^(?P<name>.+?)(?P<late>[_-]late)?_(?P<id>\d+)_(?P<att>\d+)_(?P<rest>.+)$", re.IGNORECASE)


def parse(component: str, last: bool = True) -> dict[str, str] | None:
    """{kind, name, id, late} from one path component of a class download, or None.

    `last`: the component is the file's own name (Canvas's download is flat: only a file name is Canvas's)."""
    m = _MOODLE.match(component)
    if m and m["plugin"] == "file":
        return {"kind": MOODLE, "name": m["name"].strip(), "id": m["id"], "late": ""}
    m = _CANVAS.match(component) if last else None
    if m:
        return {"kind": CANVAS, "name": m["name"], "id": m["id"], "late": "late" if m["late"] else ""}
    return None


def identity_of(rel: Sequence[str]) -> dict[str, str] | None:
    """The identity the first component of `rel` that names a student gives, or None.

    The first: the LMS's name comes before anything the student named (a folder or
    file of theirs called like another student's is inside their own)."""
    for n, part in enumerate(rel):
        found = parse(part, last=n == len(rel) - 1)
        if found:
            return found
    return None


def submitter(found: dict[str, str]) -> dict[str, str]:
    """results.json's submitter for an identity (`extra_data.submitters`' shape, with the LMS's id)."""
    person = {"name": display(found["name"], 300), "email": "", "sid": "", "lms": found["kind"], "lms_id": found["id"]}
    if found.get("late"):
        person["late"] = "yes"
    return person


def identities(found: Iterable, say: Callable[[str], None]) -> dict:
    """{Found: [submitter]} for files under a folder (or class zip) whose every file is named by one layout.

    `found` items have `root` (their folder argument; None for a file given by
    name) and `rel`. A root where only some files follow a layout costs one line."""
    by_root: dict = {}
    for f in found:
        by_root.setdefault(f.root, []).append(f)
    out = {}
    for root, files in by_root.items():
        seen = {f: identity_of(f.rel) for f in files}
        kinds = {s["kind"] for s in seen.values() if s}
        named = [f for f in files if seen[f]]
        if len(kinds) == 1 and len(named) == len(files):
            out.update({f: [submitter(seen[f])] for f in files})
        elif named and root is not None:
            say(
                t(
                    "grade_lms_names_mixed",
                    root=display(root),
                    named=len(named),
                    total=len(files),
                    kinds="/".join(sorted(kinds)),
                )
            )
    return out


# -- class zips -------------------------------------------------------------------
def _members(zf: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, list[str]]]:
    """The zip's submission files with their safe relative paths (None-free, no `..`, no absolute path)."""
    out = []
    for info in zf.infolist():
        if info.is_dir():
            continue
        parts = [p for p in info.filename.replace("\\", "/").split("/") if p not in ("", ".")]
        if not parts or any(p == ".." or "\0" in p or p in SKIP for p in parts) or ":" in parts[0]:
            continue
        if parts[-1].lower().endswith(SUFFIXES) and not parts[-1].startswith("."):
            out.append((info, parts))
    return out


def class_zip(path: str | os.PathLike[str]) -> str | None:
    """The LMS whose class download `path` is (MOODLE or CANVAS), or None (a student's zip, or not a zip)."""
    try:
        with zipfile.ZipFile(path) as zf:
            if len(zf.infolist()) > MAX_MEMBERS:
                return None
            members = _members(zf)
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError):
        return None
    kinds = {(identity_of(parts) or {}).get("kind") for _, parts in members}
    return next(iter(kinds)) if members and len(kinds) == 1 and None not in kinds else None


def unpack(path: str, out: str | os.PathLike[str], max_bytes: int, say: Callable[[str], None]) -> str:
    """Unpack class zip `path` into OUT/.lms/<name>-<hash of its real path>/ (made afresh); returns that folder.

    A member larger than `max_bytes` is left out with one line (the judge would refuse it)."""
    real = os.path.realpath(path)
    stem = re.sub(r"[^A-Za-z0-9-]+", "_", os.path.splitext(os.path.basename(real))[0]).strip("_")[:40] or "download"
    dest = os.path.join(os.fspath(out), UNPACKED, f"{stem}-{hashlib.sha256(os.fsencode(real)).hexdigest()[:8]}")
    shutil.rmtree(dest, ignore_errors=True)
    with zipfile.ZipFile(path) as zf:
        for info, parts in _members(zf):
            if info.file_size > max_bytes:
                say(
                    t(
                        "grade_member_over_limit",
                        path=display(path),
                        member=display(info.filename, 200),
                        mb=max_bytes >> 20,
                    )
                )
                continue
            target = os.path.join(dest, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                left = max_bytes + 1
                while chunk := src.read(min(1 << 20, left)):
                    dst.write(chunk)
                    left -= len(chunk)
                    if left <= 0:  # the header lied about the size
                        break
            if left <= 0:
                os.unlink(target)
                say(t("grade_member_too_large", path=display(path), member=display(info.filename, 200)))
    return dest


def expand(
    paths: Iterable, out: str | os.PathLike[str], max_bytes: int, say: Callable[[str], None]
) -> tuple[list[str], set[str]]:
    """(the arguments with each class zip given replaced by its unpacked folder, the real paths of those zips).

    Only a zip given by name is ever a class download: one found in a folder
    (a download's, an export's) is a student's file, whatever its members are
    called, so no student's upload can pass for the LMS's container and file
    its notebooks under other students' names."""
    args = [os.fsdecode(os.fspath(p)) for p in paths]
    out_args, zips = [], set()
    for arg in args:
        kind = class_zip(arg) if os.path.isfile(arg) else None
        if not kind:
            out_args.append(arg)
            continue
        zips.add(os.path.realpath(arg))
        try:
            out_args.append(unpack(arg, out, max_bytes, say))
        except (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError) as exc:
            say(t("grade_cannot_unpack", path=display(arg), kind=kind, reason=exc))
    return out_args, zips

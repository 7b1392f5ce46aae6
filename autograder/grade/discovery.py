"""Which file is which: the submission files under the arguments, their ids and their bytes' hash.

See the package's docstring (`autograder.grade`) for the rules an id follows.
"""

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.grade.progress import say
from autograder.grade.text import display
from autograder.messages import t

SUFFIXES = (".ipynb", ".zip")
SKIP_DIRS = (".ipynb_checkpoints", "__MACOSX", "__pycache__", ".git")
MAX_ID = 96

_SAFE_PART = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")


# -- finding the files ----------------------------------------------------------
@dataclass(frozen=True)
class Found:
    """One submission file: where it was found and under which argument."""

    path: Path  # as found: the argument, or a file under it
    rel: tuple[str, ...]  # its path relative to the folder argument (a file argument: its name)
    parts: tuple[str, ...]  # every component of its absolute path (ids widen leftwards from rel)
    real: str  # os.path.realpath: one row per real file
    root: str | None = None  # the folder argument it was found under (None: a file given by name)

    def __fspath__(self) -> str:
        return os.fspath(self.path)


def _walk(root: str, skip_real: set[str]) -> Iterator[str]:
    """Submission files under a folder, in a stable order; unreadable folders are reported."""

    def onerror(exc: OSError) -> None:
        say(t("grade_cannot_read", path=display(exc.filename or root), reason=exc.strerror or exc))

    for dirpath, dirs, files in os.walk(root, onerror=onerror):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIP_DIRS and os.path.realpath(os.path.join(dirpath, d)) not in skip_real
        )
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES):
                full = os.path.join(dirpath, name)
                if os.path.isfile(full):
                    yield full


def collect(
    paths: Iterable[str | bytes | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    exclude: Iterable[str] = (),
) -> list[Found]:
    """[Found] from files and folders (folders: *.ipynb and *.zip inside), each real file once.

    A path that does not exist is reported on stderr (one line) and skipped. A
    file given by name is kept whatever its name (a bad file gets a clear
    reason in its results, not a skip). `out`, if under a folder, is not searched;
    nor is a file whose real path is in `exclude` (an LMS's class zip, graded as
    the files it holds: `autograder.lms.layouts.expand`)."""
    skip = {os.path.realpath(out)} if out is not None else set()
    found: list[Found] = []
    seen: set[str] = set(exclude)
    for given in paths:
        arg = os.fspath(given)
        if isinstance(arg, bytes):
            arg = os.fsdecode(arg)
        if not os.path.lexists(arg) or not os.path.exists(arg):
            say(t("grade_no_such", path=display(arg)))
            continue
        if os.path.isdir(arg):
            for full in _walk(arg, skip):
                rel = tuple(Path(os.path.relpath(full, arg)).parts)
                _add(found, seen, full, rel, arg)
        else:
            _add(found, seen, arg, (os.path.basename(os.path.abspath(arg)),))
    return found


def _add(found: list[Found], seen: set[str], path: str, rel: tuple[str, ...], root: str | None = None) -> None:
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    parts = Path(os.path.abspath(path)).parts[1:]
    found.append(Found(Path(path), rel, tuple(parts), real, root))


# -- ids ----------------------------------------------------------------------
def _strip_suffix(name: str) -> str:
    low = name.lower()
    for s in SUFFIXES:
        if low.endswith(s) and len(name) > len(s):
            return name[: -len(s)]
    return name


def _id_at(f: Found, depth: int) -> str:
    """The id from the last `depth` components of the file's path."""
    comps = list(f.parts[-depth:]) if depth <= len(f.parts) else list(f.rel)
    comps[-1] = _strip_suffix(comps[-1])
    plain = "__".join(comps)
    if all(_SAFE_PART.fullmatch(c) for c in comps) and len(plain) <= MAX_ID:
        return plain
    slug = re.sub(r"[^A-Za-z0-9-]+", "_", "_".join(comps)).strip("_-")[:60].rstrip("_-") or "submission"
    digest = hashlib.sha256(os.fsencode("/".join(comps))).hexdigest()[:8]
    return f"{slug}-{digest}"


def assign_ids(found: list[Found]) -> dict[Found, str]:
    """{Found: id}: safe, unique (also ignoring case) and independent of the order of the files."""
    depth = {f: len(f.rel) for f in found}
    while True:
        ids = {f: _id_at(f, depth[f]) for f in found}
        groups: dict[str, list[Found]] = {}
        for f in found:
            groups.setdefault(ids[f].lower(), []).append(f)
        widened = False
        for group in groups.values():
            if len(group) > 1:
                for f in group:
                    if depth[f] < len(f.parts):
                        depth[f] += 1
                        widened = True
        if not widened:
            break
    used: set[str] = set()
    out: dict[Found, str] = {}
    for f in sorted(found, key=lambda f: (ids[f].lower(), os.fsencode(f.real))):
        candidate, n = ids[f], 2
        while candidate.lower() in used:  # the same path twice over (cannot widen): number them
            candidate, n = f"{ids[f]}-{n}", n + 1
        used.add(candidate.lower())
        out[f] = candidate
    return out


def sha256_of(path: str | os.PathLike[str]) -> str | None:
    """The file's sha256 (hex), or None where it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()

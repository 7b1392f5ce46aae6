"""`python -m autograder new NAME`: a working skeleton of an assignment, in the course's checkout.

It writes the assignment's own places and nothing else (docs/pages/adding.md, the tutorial
that goes on from it):

    assignments/NAME/NAME.ipynb            the otter master notebook: one stub, one public check
    assignments/NAME/NAME.pt-BR.yml        its pt-BR edition, every entry's hashes recorded
    solutions/NAME.py                      the reference: one function, `NAME(query, key)`
    autograder/private/assignments/NAME/   its suite (a value check with a likely cause, a dtype property), its
                                           messages.yml (that cause, both languages) and its
                                           catalog (one bug, marked as an example, one correct entry)
    grading.yml                            its entry under `assignments:`, inserted after the
                                           last one; the rest of the file is left as it is

`build` then writes both student notebooks, the examples (the reference, the template and the
catalog's bug) and the zip; `grade` and `audit --assignment NAME` work on it at once.

The skeleton's files are package data, in one place (`skeleton/`, one folder per place of
the checkout, `PLACES`; every `__NAME__` in a path or a text stands for NAME). Everything is checked before
anything is written, the files are made in a staging folder inside the checkout and moved
into place, and grading.yml is written last, whole: a refusal (one line, exit status 2)
leaves the checkout as it was. A fault of the kit's own (a skeleton that does not fit its
checks) is one line too, with exit status 3.
"""

import builtins
import importlib.util
import keyword
import os
import re
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

import yaml

from autograder import config as config_mod
from autograder import layout
from autograder.faults import KitFault

SKELETON = "skeleton"  # this package's folder of templates
TOKEN = "__NAME__"  # what stands for the assignment's name in the templates' paths and texts
SUFFIX = ".tmpl"  # every template's name ends with it (no template is a module of the kit)
NAME_SHAPE = re.compile(r"[a-z][a-z0-9_]*\Z")  # a module, a folder, a question and a function
PLACES = {  # where each folder of the skeleton goes in the checkout
    "notebook": Path("assignments", TOKEN),  # the master notebook and its pt-BR file
    "reference": Path("solutions"),
    "suite": layout.ASSIGNMENTS.relative_to(layout.KIT_ROOT) / TOKEN,  # suites, messages.yml, __init__.py
    "entries": layout.ASSIGNMENTS.relative_to(layout.KIT_ROOT) / TOKEN / layout.CATALOG_FOLDER,
}
ENTRY = "grading.yml"  # the skeleton's grading.yml entry (not a place: inserted into the file)
TRANSLATED = "pt-BR"
MASTER = Path("notebook", f"{TOKEN}.ipynb")
TRANSLATION = Path("notebook", f"{TOKEN}.{TRANSLATED}.yml")
REFERENCE = Path("reference", f"{TOKEN}.py")
MESSAGES = Path("suite", layout.MESSAGES_FILE)


class Refused(Exception):
    """NAME cannot be made here: the one line says why."""


def _templates():
    """[(path in the skeleton, text)] of every template file."""
    root = resources.files(__package__).joinpath(SKELETON)
    out = []

    def walk(node, rel):
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, rel / child.name)
            elif child.name.endswith(SUFFIX):
                out.append((rel / child.name.removesuffix(SUFFIX), child.read_text(encoding="utf-8")))

    walk(root, Path())
    return out


def destination(rel, name):
    """Where the skeleton's file `rel` goes in the checkout, for NAME."""
    top, *rest = rel.parts
    return Path(str(PLACES[top].joinpath(*rest)).replace(TOKEN, name))


def place(rel, name):
    """The place of the checkout that the skeleton's file `rel` goes under: the first folder
    or file of its destination that bears NAME (one of the assignment's own, moved whole)."""
    parts = destination(rel, TOKEN).parts
    own = next(i for i, part in enumerate(parts) if TOKEN in part)
    return Path(str(Path(*parts[: own + 1])).replace(TOKEN, name))


def places(name):
    return sorted({place(rel, name) for rel, _ in _templates() if rel.as_posix() != ENTRY})


def grading_file():
    """The grading.yml whose `assignments:` are in force: the course's own, when it has that
    section; else the kit's (the checkout's top-level file)."""
    own = config_mod.locate()
    if own is not None and "assignments" in (config_mod._read(own) or {}):
        return own
    return layout.KIT_ROOT / "grading.yml"


def _check_name(name, course, cfg):
    if not NAME_SHAPE.match(name) or keyword.iskeyword(name):
        raise Refused(
            f"{name!r} is not a name for an assignment: lower-case letters, digits and _, starting with a letter "
            "(it names a module, a folder, a question and a function)"
        )
    if name in cfg.assignments:
        raise Refused(f"{name!r} already exists: grading.yml has an assignment of that name")
    from autograder.judge import detect

    for other in cfg.assignments:
        if name in detect.graded_names(other, cfg) or name in cfg.questions(other):
            raise Refused(f"{name!r} clashes with a question of {other!r} (the skeleton's question takes its name)")
    if hasattr(builtins, name) or importlib.util.find_spec(name) is not None:
        raise Refused(f"{name!r} clashes with a Python name a notebook uses (a built-in or an importable module)")
    for place in places(name):
        if (course / place).exists():
            raise Refused(f"{name!r} already exists: {course / place} is there")


def _render(name):
    """{destination in the checkout: text} of every file of the skeleton, and the grading.yml entry."""
    files, entry = {}, None
    for rel, text in _templates():
        text = text.replace(TOKEN, name)
        if rel.as_posix() == ENTRY:
            entry = text
        else:
            files[destination(rel, name)] = text
    return files, entry


def _stamped(name, files):
    """The pt-BR translation of the rendered skeleton with every entry's hashes recorded (what
    `python -m autograder.build.stamp` writes), checked against the English it translates."""
    import nbformat

    from autograder.build import editions

    nb = nbformat.reads(files[destination(MASTER, name)], as_version=4)
    units = editions.english_units(name, nb, source=files[destination(REFERENCE, name)])
    tr = yaml.safe_load(files[destination(TRANSLATION, name)])
    entries = {(section, key) for section in editions.SECTIONS for key in (tr.get(section) or {})}
    if entries != set(units):
        raise KitFault(f"the skeleton's translation does not match its English: {sorted(entries ^ set(units))}")
    for (section, key), unit in units.items():
        entry = tr[section][key]
        entry["en"], entry[TRANSLATED] = editions.digest(unit.english), editions.digest(entry["text"])
    return editions.dump(name, TRANSLATED, tr, list(units))


def with_entry(text, entry):
    """grading.yml's `text` with `entry` (an assignment's lines) after the last line of its
    `assignments:` section; every other line as it was."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"assignments:\s*(#.*)?$", line)), None)
    if start is None:
        raise Refused("grading.yml has no `assignments:` section to add to")
    last = start
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and not line[0].isspace() and not line.startswith("#"):
            break  # the next top-level section
        if line.strip() and line[0].isspace():
            last = i  # a line of the section (comments at column 0 before the next one belong to it)
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    out = "".join(lines[: last + 1]) + entry + "".join(lines[last + 1 :])
    before, after = yaml.safe_load(text), yaml.safe_load(out)
    new = after["assignments"].pop(next(iter(yaml.safe_load(entry))))
    if after != before or not new.get("questions"):
        raise KitFault("the entry did not land as one more assignment of grading.yml")
    return out


def create(name, log=print):
    """Write the skeleton of `name` into the checkout; returns the paths written (relative to it)."""
    course = layout.COURSE
    if course is None or not layout.has_private():
        raise Refused("new writes into a checkout of the kit (assignments/ beside the autograder package): none here")
    cfg = config_mod.load()
    _check_name(name, course, cfg)
    grading = grading_file()
    files, entry = _render(name)
    from autograder import messages

    own_keys = yaml.safe_load(files[destination(MESSAGES, name)])
    taken = sorted(set(own_keys) & set(messages.catalog()))
    if taken:
        raise Refused(f"{name!r} clashes with the message key {taken[0]!r} (the skeleton's keys are named after it)")
    files[destination(TRANSLATION, name)] = _stamped(name, files)
    grading_text = with_entry(grading.read_text(encoding="utf-8"), entry)
    staging = Path(tempfile.mkdtemp(prefix=".kit-new-", dir=course))
    moved = []
    try:
        for rel, text in files.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_text(text, encoding="utf-8")
        for rel in places(name):  # checked again just before the move
            if (course / rel).exists():
                raise Refused(f"{name!r} already exists: {course / rel} is there")
        for rel in places(name):
            (course / rel).parent.mkdir(parents=True, exist_ok=True)
            os.rename(staging / rel, course / rel)
            moved.append(course / rel)
        from autograder import atomic

        atomic.write_text(grading, grading_text)
    except BaseException:
        for path in reversed(moved):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    written = sorted(files) + [Path(os.path.relpath(grading, course))]
    for rel in written:
        log(f"wrote {rel.as_posix()}")
    return written


def main(*, name: str) -> int:
    """`new NAME`: write the skeleton of the assignment NAME (0), or refuse in one line (2)."""
    try:
        create(name)
    except Refused as exc:
        print(f"new: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the checkout cannot be written: what was moved in is taken out again
        print(f"new: cannot write the skeleton of {name!r}: {exc.strerror or exc} ({exc.filename})", file=sys.stderr)
        return 2
    except KitFault as exc:
        print(f"new: internal error (the kit's own fault, nothing written): {exc}", file=sys.stderr)
        return 3
    print(
        f"next: python -m autograder build --assignment {name}; python -m autograder grade "
        f"examples/submissions/{name} --out out/{name}; python -m autograder audit --assignment {name} "
        "(docs/pages/adding.md goes on from here)"
    )
    return 0

"""The kit's Gradescope autograder zip for one assignment.

Starts from the zip otter assign generated and keeps what makes it recognisable
to otter's Gradescope plumbing (`otter_config.json`, the public tests in
`tests/`), but replaces the runner: `run_autograder` runs the kit's trusted
judge (`python -m autograder gradescope`), never otter's `run_otter.py`, which
unpickles a submission's `.OTTER_LOG` before any plugin runs. `setup.sh`
installs the judge's dependencies, not the kit: the judge runs from `kit/`.

The zip carries one assignment's private material only: its hidden suites,
its reference solutions, and, of earlier assignments' solutions, just the
functions it provides to students (sliced out by `private_sources`). No
catalog, no hostile battery, no other assignment's suites.

Layout (every member dated 1980-01-01, sorted, so rebuilding gives the same bytes):

    run_autograder            the kit's (0755), from build/templates/
    setup.sh                  the kit's (0755), from build/templates/
    otter_config.json         otter's
    tests/<question>.py       otter's public tests
    kit/autograder/...        the package without private/, audit/, demo/
    kit/autograder/grading.yml    the course's grading.yml, this assignment only
    kit/autograder/private/suites/{calls.py,value_checks.py,...,conftest.py,pytest.ini}
    kit/autograder/private/assignments/<assignment>/ (its suites; not its catalog or battery)
    kit/autograder/private/solutions/<assignment>.py (+ provided functions)
"""

import ast
import zipfile
from importlib import resources
from pathlib import Path

import yaml

from autograder import atomic, layout
from autograder import config as config_mod

# otter's members that are kept; everything else (run_otter.py, otter's
# run_autograder and setup.sh, environment.yml, requirements) is replaced.
KEEP_FROM_OTTER = ("otter_config.json",)
KEEP_FROM_OTTER_DIRS = ("tests/",)
# Parts of the package a grading image has no use for (the private root is
# added per assignment below).
PACKAGE_SKIP = ("private", "audit", "demo")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
SKIP_SUFFIXES = (".pyc", ".pyo")
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def template(name, assignment):
    text = resources.files("autograder.build").joinpath("templates", name).read_text()
    return text.replace("@ASSIGNMENT@", assignment)


def member_info(name, mode):
    """A zip member dated FIXED_DATE with unix mode `mode` (same bytes on every build)."""
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100000 | mode) << 16
    info.create_system = 3  # unix, so the modes are honoured
    return info


def _files(folder):
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not SKIP_PARTS & set(rel.parts) and not path.name.endswith(SKIP_SUFFIXES):
            yield rel, path


def package_members():
    """{zip name: bytes} of the package's public part (no private root, audit or demo)."""
    members = {}
    for rel, path in _files(layout.PACKAGE):
        if rel.parts[0] in PACKAGE_SKIP or rel.as_posix() == "grading.yml":
            continue
        members[f"kit/autograder/{rel.as_posix()}"] = path.read_bytes()
    return members


def _used_names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _provided(tree):
    """The names a solutions module's `PROVIDED = (...)` lists (its imports of them count as used)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PROVIDED" for t in node.targets):
            return {e.value for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return set()


def slice_module(source, names):
    """The source of a solutions module cut down to `names` and the top-level
    definitions they use, with the imports those need (and those of the
    functions its `PROVIDED` lists, which no definition may call). Returns
    (text, {module: names} of the sibling modules it still imports from)."""
    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    keep, todo = set(), [n for n in names if n in defs]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        todo += [u for u in _used_names(defs[name]) if u in defs and u not in keep]
    used = set().union(*(_used_names(defs[n]) for n in keep)) if keep else set()
    used |= _provided(tree)
    parts, siblings = [], {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = [(a.asname or a.name.split(".")[0]) for a in node.names]
            if not any(b in used for b in bound):
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                siblings.setdefault(node.module, set()).update(
                    a.name for a in node.names if (a.asname or a.name) in used
                )
            parts.append(ast.get_source_segment(source, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in keep:
            parts.append(ast.get_source_segment(source, node))
    return "\n\n\n".join(parts) + "\n", siblings


def private_sources(assignment):
    """{zip name: text} of the private material one assignment's zip needs:
    its suites, its solutions module, and the provided functions it takes from
    earlier assignments' modules (sliced: nothing else of them)."""
    members = {}
    suites = layout.SUITES
    # the suites' shared library: every plain file of its folder (calls.py,
    # trained.py, conftest.py, pytest.ini, ...), so a new shared module ships without a list to update
    for path in sorted(p for p in suites.iterdir() if p.is_file() and p.suffix in (".py", ".ini")):
        members[f"kit/autograder/private/suites/{path.name}"] = path.read_text()
    members["kit/autograder/private/assignments/__init__.py"] = (layout.ASSIGNMENTS / "__init__.py").read_text()
    for rel, path in _files(layout.suite(assignment)):
        if not layout.audit_only(rel):
            members[f"kit/autograder/private/assignments/{assignment}/{rel.as_posix()}"] = path.read_text()
    members["kit/autograder/private/__init__.py"] = (layout.PRIVATE / "__init__.py").read_text()
    members["kit/autograder/private/solutions/__init__.py"] = (layout.SOLUTIONS / "__init__.py").read_text()
    whole = (layout.SOLUTIONS / f"{assignment}.py").read_text()
    _, needs = slice_module(
        whole, [n.name for n in ast.parse(whole).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    )
    members[f"kit/autograder/private/solutions/{assignment}.py"] = whole
    wanted = {}
    while needs:
        module, names = needs.popitem()
        if module == assignment or names <= wanted.get(module, set()):
            continue
        wanted[module] = wanted.get(module, set()) | names
        text, more = slice_module((layout.SOLUTIONS / f"{module}.py").read_text(), sorted(wanted[module]))
        header = (
            f'"""Of the {module} reference, only what {assignment} provides to students or '
            'its reference uses (sliced by the build)."""\n'
        )
        members[f"kit/autograder/private/solutions/{module}.py"] = header + text
        for m, n in more.items():
            needs[m] = needs.get(m, set()) | n
    return members


def grading_yml(assignment, cfg=None):
    """The course's grading.yml (as in force at build time) with only this assignment."""
    cfg = cfg or config_mod.load()
    data = {k: v for k, v in cfg.data.items() if k != "assignments"}
    data = {"assignments": {assignment: cfg.data["assignments"][assignment]}, **data}
    header = f"# grading.yml for the {assignment} autograder zip (written by `python -m autograder build`).\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def otter_members(otter_zip):
    """{zip name: bytes} of what is kept from otter's generated zip."""
    kept = {}
    with zipfile.ZipFile(otter_zip) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if info.filename in KEEP_FROM_OTTER or info.filename.startswith(KEEP_FROM_OTTER_DIRS):
                kept[info.filename] = zf.read(info)
    if "otter_config.json" not in kept:
        raise ValueError(f"{otter_zip} has no otter_config.json")
    return kept


def build_zip(assignment, otter_zip, dest, cfg=None):
    """Write the kit's autograder zip for `assignment` to `dest`; returns its member names."""
    entries = {
        "run_autograder": (template("run_autograder.sh", assignment).encode(), 0o755),
        "setup.sh": (template("setup.sh", assignment).encode(), 0o755),
        "kit/autograder/grading.yml": (grading_yml(assignment, cfg).encode(), 0o644),
    }
    for name, data in otter_members(otter_zip).items():
        entries[name] = (data, 0o644)
    for name, data in package_members().items():
        entries[name] = (data, 0o644)
    for name, text in private_sources(assignment).items():
        entries[name] = (text.encode(), 0o644)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(dest) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        for name in sorted(entries):
            data, mode = entries[name]
            zf.writestr(member_info(name, mode), data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return sorted(entries)

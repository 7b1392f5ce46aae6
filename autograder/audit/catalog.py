"""Read catalog entries and fill notebooks with them."""
import ast
import copy
import inspect
import importlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder import layout

CATALOG = layout.CATALOG
SOLUTION_TAG = "kit-solution"


@dataclass
class Entry:
    assignment: str
    name: str
    path: Path
    description: str
    correct: bool
    functions: list
    questions: list
    example: bool
    sources: dict  # function name -> source text, with the entry's imports first
    source: str = ""  # where real code like it comes from (a tutorial, book or library), if it does


def _defs(source):
    """{name: source segment} of the top-level functions and classes in `source`."""
    tree = ast.parse(source)
    return {
        node.name: ast.get_source_segment(source, node)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


LIST_KEYS = ("functions", "questions")


def _header(doc):
    """`key: value` lines; `functions` and `questions` are [bracketed] lists."""
    meta = {}
    for line in doc.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        meta[key] = yaml.safe_load(value) if key in LIST_KEYS and value.startswith("[") else value
    return meta


def load_entry(path):
    path = Path(path)
    source = path.read_text()
    meta = _header(ast.get_docstring(ast.parse(source)) or "")
    defs = _defs(source)
    imports = "".join(
        ast.get_source_segment(source, n) + "\n"
        for n in ast.parse(source).body if isinstance(n, (ast.Import, ast.ImportFrom))
    )
    functions = list(meta.get("functions") or [])
    missing = [f for f in functions if f not in defs]
    if missing:
        raise ValueError(f"{path}: defines no {missing[0]}")
    correct = "correct" in meta
    return Entry(
        assignment=path.parent.name, name=path.stem, path=path,
        description=str(meta.get("correct") if correct else meta.get("bug")),
        correct=correct, functions=functions, questions=list(meta.get("questions") or []),
        example=str(meta.get("example", "")).lower() in ("true", "yes"),
        sources={f: (imports + "\n\n" if imports else "") + defs[f] for f in functions},
        source=str(meta.get("source", "")),
    )


def entries(assignment=None):
    dirs = [CATALOG / assignment] if assignment else sorted(p for p in CATALOG.iterdir() if p.is_dir())
    return [load_entry(p) for d in dirs for p in sorted(d.glob("*.py"))]


def reference_sources(assignment):
    """{graded function: reference source}, from solutions/ (provided ones excluded)."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    provided = set(getattr(module, "PROVIDED", ()))
    out = {}
    for name, obj in vars(module).items():
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__ and name not in provided:
            out[name] = inspect.getsource(obj).rstrip() + "\n"
    return out


def _defined_name(cell):
    src = cell.get("source", "")
    src = "".join(src) if isinstance(src, list) else src
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return names[0] if len(names) == 1 else None


def fill(notebook, sources):
    """A copy of a student notebook with the cells defining `sources`' names replaced.

    The cell of a graded function is the one tagged kit-solution that defines it.
    """
    nb = copy.deepcopy(notebook)
    todo = dict(sources)
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        tags = (cell.get("metadata") or {}).get("tags") or []
        name = _defined_name(cell)
        if name in todo and SOLUTION_TAG in tags:
            cell["source"] = todo.pop(name)
            cell["outputs"], cell["execution_count"] = [], None
    if todo:
        raise ValueError(f"no cell in the notebook defines {', '.join(sorted(todo))}")
    return nb


def fill_reference(notebook, assignment):
    return fill(notebook, reference_sources(assignment))


def fill_entry(notebook, entry):
    """The reference for every graded function, except the entry's own versions."""
    sources = reference_sources(entry.assignment)
    sources.update(entry.sources)
    return fill(notebook, sources)

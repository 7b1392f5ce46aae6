"""Read catalog entries and fill notebooks with them."""

import ast
import copy
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder import declarations, layout
from autograder.judge import by_hand as typed_cells
from autograder.judge.by_hand import TAG as BY_HAND_TAG

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
    # What the entry types into the by-hand cell (its BY_HAND_CELL string: the lines under the
    # cell's comments), or None (the reference's numbers). An entry with one lists `by_hand`
    # among its functions: the question it targets there.
    by_hand: str | None = None
    # Every typed-answer cell the entry fills, {question: its lines}: `by_hand` above and the other
    # forms (judge.by_hand.forms: SHAPES_DRILL_CELL for `shapes_drill`); each is listed among its functions.
    typed: dict | None = None
    # The likely causes (message keys) the entry's bug reproduces, the one its questions should
    # name first; `[]`: a bug whose symptoms name it alone, so no cause fits it; None (no
    # `causes:` line): the audit cannot judge its causes (`audit.causes`).
    causes: list | None = None


def _defs(source):
    """{name: source segment} of the top-level functions and classes in `source`."""
    tree = ast.parse(source)
    return {
        node.name: ast.get_source_segment(source, node)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


LIST_KEYS = ("functions", "questions", "causes")


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
        for n in ast.parse(source).body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    )
    functions = list(meta.get("functions") or [])
    missing = [f for f in functions if f not in defs]
    if missing:
        raise ValueError(f"{path}: defines no {missing[0]}")
    correct = "correct" in meta
    typed = _typed_texts(source, path)
    by_hand = typed.get(typed_cells.QUESTION)
    return Entry(
        assignment=path.parent.parent.name,  # <assignment>/catalog/<entry>.py
        name=path.stem,
        path=path,
        description=str(meta.get("correct") if correct else meta.get("bug")),
        correct=correct,
        functions=functions + list(typed),
        questions=list(meta.get("questions") or []),
        example=str(meta.get("example", "")).lower() in ("true", "yes"),
        sources={f: (imports + "\n\n" if imports else "") + defs[f] for f in functions},
        source=str(meta.get("source", "")),
        by_hand=by_hand,
        typed=typed,
        causes=list(meta["causes"] or []) if "causes" in meta else None,
    )


def _typed_texts(source, path):
    """{question: the entry's top-level `<QUESTION>_CELL = "..."` string} for each typed form
    (`BY_HAND_CELL`, `SHAPES_DRILL_CELL`)."""
    names = {f"{f.question.upper()}_CELL": f.question for f in typed_cells.forms(declarations.typed_forms())}
    out = {}
    for node in ast.parse(source).body:
        hit = (
            [names[t.id] for t in node.targets if getattr(t, "id", None) in names]
            if isinstance(node, ast.Assign)
            else []
        )
        if hit:
            if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                raise ValueError(f"{path}: {hit[0].upper()}_CELL must be a string")
            out[hit[0]] = node.value.value
    return out


def entries(assignment=None):
    """The catalog's entries: of `assignment`, or of every assignment grading.yml lists (a
    folder of an assignment still to come, not listed yet, waits there unread)."""
    from autograder import config

    names = [assignment] if assignment else config.load().assignments
    dirs = [layout.catalog(a) for a in names if layout.catalog(a).is_dir()]
    return [load_entry(p) for d in dirs for p in sorted(d.glob("*.py"))]


def reference_sources(assignment):
    """{graded function: reference source}, from solutions/ (provided ones excluded)."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    provided = set(getattr(module, "PROVIDED", ()))
    out = {}
    for name, obj in vars(module).items():
        if (
            (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__
            and name not in provided
        ):
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


def fill(notebook, sources, by_hand=None):
    """A copy of a student notebook with the cells defining `sources`' names replaced,
    and the by-hand cell's lines (under its comments) replaced by `by_hand` when given
    (a string: the by-hand cell; a dict {question: lines}: each typed-answer cell).

    The cell of a graded function is the one tagged kit-solution that defines it.
    """
    nb = copy.deepcopy(notebook)
    todo = dict(sources)
    typed = dict(by_hand) if isinstance(by_hand, dict) else {} if by_hand is None else {typed_cells.QUESTION: by_hand}
    forms = typed_cells.forms(declarations.typed_forms())
    tags_of = {f.tag: f.question for f in forms}
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        tags = (cell.get("metadata") or {}).get("tags") or []
        name = _defined_name(cell)
        if name in todo and SOLUTION_TAG in tags:
            cell["source"] = todo.pop(name)
            cell["outputs"], cell["execution_count"] = [], None
        elif any(tags_of.get(tag) in typed for tag in tags):
            question = next(tags_of[tag] for tag in tags if tags_of.get(tag) in typed)
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            comments = [line for line in src.split("\n") if line.startswith("#")]
            cell["source"] = "\n".join(comments + [typed.pop(question).strip("\n")])
            cell["outputs"], cell["execution_count"] = [], None
    if todo:
        raise ValueError(f"no cell in the notebook defines {', '.join(sorted(todo))}")
    if typed:
        tag = {f.question: f.tag for f in forms}.get(sorted(typed)[0], BY_HAND_TAG)
        raise ValueError(f"no cell in the notebook is tagged {tag}")
    return nb


def reference_by_hand(assignment):
    """The by-hand cell's lines as the reference answers them (4 decimals), or None
    when the assignment has no by-hand question."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    if typed_cells.QUESTION not in getattr(module, "BY_HAND", {}):
        return None
    common = importlib.import_module(f"autograder.private.assignments.{assignment}.common")
    answers = common.by_hand_answers()
    return "\n".join(
        f"{name} = [{', '.join(f'{x:.4f}' for x in answers[name].tolist())}]"
        for name in ("scores", "weights", "output")
    )


def reference_typed(assignment):
    """{question: the typed-answer cell's lines as the reference answers them} for every
    typed question of the assignment (the by-hand numbers; the drill's words, from BY_HAND)."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    out = {}
    for question, answers in getattr(module, "BY_HAND", {}).items():
        if question == typed_cells.QUESTION:
            out[question] = reference_by_hand(assignment)
        elif question in declarations.typed_forms():
            out[question] = "\n".join(
                f"{name} = {tuple(v)!r}" if isinstance(v, (list, tuple)) else f"{name} = {v!r}"
                for name, v in answers.items()
            )
    return out


def fill_reference(notebook, assignment):
    return fill(notebook, reference_sources(assignment), reference_typed(assignment))


def fill_entry(notebook, entry):
    """The reference for every graded function (and the by-hand cell), except the entry's own versions."""
    sources = reference_sources(entry.assignment)
    sources.update(entry.sources)
    typed = reference_typed(entry.assignment)
    typed.update(entry.typed or {})
    return fill(notebook, sources, typed)

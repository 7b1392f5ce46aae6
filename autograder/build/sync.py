"""Golden-file sync: the generated cells of the master notebooks, from `solutions/`.

`solutions/<assignment>.py` is the only source of every function. The master
notebook `assignments/<assignment>/<assignment>.ipynb` holds three kinds of
generated code cell, each found by its tag:

- `kit-imports`: the imports the graded reference code needs (torch, math, nn).
- `kit-provided`: one cell with the functions the assignment gives students
  (the module's `PROVIDED`), starting with the `# PROVIDED:` line the judge
  drops; the judge runs its own copy instead.
- `kit-solution`: one cell per graded function or class, with the signature
  and docstring as written in solutions/, the reference body inside an otter
  solution block, and a stub that raises NotImplementedError in otter's prompt
  block (what the student version keeps). Its `metadata.kit.name` names the
  function or class.

The `# BEGIN QUESTION` raw cells are synced too: their `points:` come from
grading.yml, and so do the markdown cells tagged `kit-grading` (the notebook's "How you
are graded") and `kit-grading-run` (the training run's settings): see
`autograder.build.grading_text`; the cells tagged `kit-time` and `kit-time-training` (the
times the notebook promises) come from the bench's measured figures: see
`autograder.build.time_text`. Everything else in the notebook (prose, tests, experiments) is
hand-written and left alone.
"""

import ast
import importlib
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from autograder import layout
from autograder.build import grading_text, texts, time_text
from autograder.judge import detect

COURSE_ROOT = layout.COURSE or Path.cwd()  # the course folder: a checkout, or where an installed kit runs
ASSIGNMENTS_DIR = COURSE_ROOT / "assignments"

SOLUTION_TAG = "kit-solution"
PROVIDED_TAG = "kit-provided"
IMPORTS_TAG = "kit-imports"
PROVIDED_HEADER = texts.get("provided_header", "en")  # both editions' texts: texts.yml
IMPORTS_HEADER = texts.get("imports_header", "en")


class SyncError(Exception):
    """A master notebook cannot be synced (a missing cell, an unknown question)."""


@dataclass
class Drift:
    assignment: str
    path: Path
    changes: list = field(default_factory=list)  # one line per changed cell
    nb: object = None  # the synced notebook (in memory, also with check)

    def __bool__(self):
        return bool(self.changes)


def master_path(assignment, root=None):
    root = Path(root) if root else ASSIGNMENTS_DIR
    return root / assignment / f"{assignment}.ipynb"


def question_name(obj_name):
    """The grading.yml question name of a graded function or class: the function's
    name, or the class's in snake case (`MultiHeadAttention` -> `multi_head_attention`)."""
    return detect.question_name(obj_name)  # the judge's rule: one place


def graded_names(module, questions):
    """The module's graded functions and classes, in grading.yml's question order; a
    question answered with typed numbers (the module's `BY_HAND`) or one the grader runs
    from other graded parts (its `RUNS`) is named by itself."""
    by_question = {q: q for q in (*getattr(module, "BY_HAND", {}), *getattr(module, "RUNS", {}))}
    for name, obj in vars(module).items():
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
            by_question[question_name(name)] = name
    missing = [q for q in questions if q not in by_question]
    if missing:
        raise SyncError(f"{module.__name__} defines nothing for question(s) {', '.join(missing)}")
    return [by_question[q] for q in questions]


# -- cell sources ---------------------------------------------------------


def _module_tree(module):
    src = inspect.getsource(module)
    return src, ast.parse(src)


def _find_def(tree, name):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
    raise SyncError(f"no top-level def or class {name}")


def _has_docstring(node):
    body = node.body
    return (
        bool(body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )


def _is_super_init(stmt):
    """`super().__init__(...)` as a statement."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    f = stmt.value.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "__init__"
        and isinstance(f.value, ast.Call)
        and isinstance(f.value.func, ast.Name)
        and f.value.func.id == "super"
    )


def stub_message(task, what, lang="en"):
    return texts.get("stub", lang).format(task=task, what=what)


def _solution_block(lines, fn, task, what):
    """Replace `fn`'s body (after its docstring and a leading super().__init__())
    in `lines` (0-based list of the module's lines, modified in place) by otter's
    solution block and a prompt block holding the stub. Returns the change in
    the number of lines."""
    body = fn.body
    keep = 1 if _has_docstring(fn) else 0
    if fn.name == "__init__" and len(body) > keep and _is_super_init(body[keep]):
        keep += 1
    if keep >= len(body):
        raise SyncError(f"{fn.name} has no body to turn into a solution")
    indent = " " * body[keep].col_offset
    # 0-based: the line after what is kept (comments after the docstring go with the body)
    start = body[keep - 1].end_lineno if keep else body[0].lineno - 1
    end = fn.end_lineno
    reference = lines[start:end]
    while reference and not reference[0].strip():
        reference.pop(0)
    for line in reference:
        if re.search(r"#\s?(BEGIN|END) (SOLUTION|PROMPT)|#\s?SOLUTION|# (BEGIN|END) IGNORE|# IGNORE", line):
            raise SyncError(f"{fn.name}: a reference line looks like an otter marker: {line.strip()!r}")
    block = (
        [f"{indent}# BEGIN SOLUTION NO PROMPT"]
        + reference
        + [
            f"{indent}# END SOLUTION",
            f'{indent}""" # BEGIN PROMPT',
            f'{indent}raise NotImplementedError("{stub_message(task, what)}")',
            f'{indent}""" # END PROMPT',
        ]
    )
    lines[start:end] = block
    return len(block) - (end - start)


def solution_cell_source(module, name):
    """The `kit-solution` cell for the graded function or class `name` of `module`:
    its source as in solutions/, every function body turned into an otter
    solution block followed by a prompt block with the stub."""
    src, tree = _module_tree(module)
    node = _find_def(tree, name)
    lines = src.split("\n")
    first = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    last = node.end_lineno
    task = question_name(name)
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not methods:
            raise SyncError(f"class {name} has no methods")
        for fn in sorted(methods, key=lambda n: n.lineno, reverse=True):  # bottom up keeps line numbers valid
            last += _solution_block(lines, fn, task, f"{name}.{fn.name}")
    else:
        last += _solution_block(lines, node, task, name)
    return "\n".join(lines[first:last]).rstrip()


def _import_bindings(tree):
    """[(bound name, import statement source, sort key)] for the module's top-level imports,
    leaving out imports from `solutions` (those are the provided functions)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]
                stmt = f"import {a.name}" + (f" as {a.asname}" if a.asname else "")
                out.append((bound, stmt, (0, a.name)))
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if (node.module or "").split(".")[0] == "solutions":
                continue
            for a in node.names:
                bound = a.asname or a.name
                stmt = f"from {node.module} import {a.name}" + (f" as {a.asname}" if a.asname else "")
                out.append((bound, stmt, (1, node.module, a.name)))
    return out


def _names_used(source):
    return {n.id for n in ast.walk(ast.parse(textwrap.dedent(source))) if isinstance(n, ast.Name)}


def _imports_for(sources, trees, always=("torch",)):
    used = set()
    for s in sources:
        used |= _names_used(s)
    seen, rows = set(), []
    for name in always:  # `import torch` is always there, whatever the module imports
        seen.add(f"import {name}")
        rows.append(((0, name), f"import {name}"))
    for tree in trees:
        for bound, stmt, key in _import_bindings(tree):
            if bound in used and stmt not in seen:
                seen.add(stmt)
                rows.append((key, stmt))
    plain = [s for k, s in sorted(rows) if k[0] == 0]
    froms = [s for k, s in sorted(rows) if k[0] == 1]
    return "\n".join(plain + froms)


def imports_cell_source(module, names):
    """The `kit-imports` cell: what the graded reference code of `module` imports."""
    src, tree = _module_tree(module)
    sources = [ast.get_source_segment(src, _find_def(tree, n)) for n in names]
    return IMPORTS_HEADER + "\n" + _imports_for(sources, [tree])


def provided_cell_source(module):
    """The `kit-provided` cell of `module` (None when it provides nothing)."""
    names = tuple(getattr(module, "PROVIDED", ()))
    if not names:
        return None
    objs = [getattr(module, n) for n in names]
    sources = [inspect.getsource(o).rstrip() for o in objs]
    trees = [ast.parse(inspect.getsource(importlib.import_module(o.__module__))) for o in objs]
    imports = _imports_for(sources, trees, always=())
    header = PROVIDED_HEADER.format(names=", ".join(names))
    return header + "\n" + imports + "\n\n\n" + "\n\n\n".join(sources)


# -- notebooks ------------------------------------------------------------


def _tags(cell):
    return list((cell.get("metadata") or {}).get("tags") or [])


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _question_config(cell):
    """(dict, header) for a raw `# BEGIN QUESTION` cell, else None."""
    if cell.get("cell_type") != "raw":
        return None
    text = _src(cell)
    first, _, rest = text.partition("\n")
    if first.strip().upper() != "# BEGIN QUESTION":
        return None
    return (yaml.safe_load(rest) or {}), first


def _render_question_config(conf, header):
    lines = [header]
    for key, value in conf.items():
        lines.append(
            yaml.safe_dump({key: value}, default_flow_style=True, sort_keys=False).strip()
            if isinstance(value, (dict, list))
            else f"{key}: {value}"
        )
    return "\n".join(lines)


def expected_cells(assignment, questions):
    """{"imports": src, "provided": src | None, "solutions": {name: src}} for an assignment."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    own_cell = {*getattr(module, "BY_HAND", {}), *getattr(module, "RUNS", {})}  # no generated cell for these
    names = [n for n in graded_names(module, list(questions)) if n not in own_cell]
    return {
        "imports": imports_cell_source(module, names),
        "provided": provided_cell_source(module),
        "solutions": {n: solution_cell_source(module, n) for n in names},
        "names": names,
    }


def sync_notebook(nb, assignment, questions):
    """Bring the generated cells of `nb` (a NotebookNode, modified in place) in line
    with solutions/ and grading.yml. Returns one line per cell that changed."""
    want = expected_cells(assignment, questions)
    changes = []

    def put(cell, source, label, origin=f"solutions/{assignment}.py"):
        if _src(cell) != source:
            cell["source"] = source
            changes.append(f"{label}: regenerated from {origin}")

    seen_solutions, seen_questions, seen_grading = [], [], []
    provided_cells, import_cells = [], []
    for i, cell in enumerate(nb.cells, start=1):
        tags = _tags(cell)
        if SOLUTION_TAG in tags:
            name = ((cell.get("metadata") or {}).get("kit") or {}).get("name")
            if name not in want["solutions"]:
                raise SyncError(
                    f"cell {i} is tagged {SOLUTION_TAG} but metadata.kit.name={name!r} "
                    f"is not a graded function of solutions/{assignment}.py"
                )
            seen_solutions.append(name)
            put(cell, want["solutions"][name], f"cell {i} ({name})")
        elif PROVIDED_TAG in tags:
            provided_cells.append(cell)
            if want["provided"] is None:
                raise SyncError(f"cell {i} is tagged {PROVIDED_TAG} but solutions/{assignment}.py provides nothing")
            put(cell, want["provided"], f"cell {i} (provided)")
            meta = cell.setdefault("metadata", {})
            if meta.get("editable") is not False or meta.get("deletable") is not False:
                meta["editable"], meta["deletable"] = False, False  # Jupyter's lock: students read it, do not edit it
                changes.append(f"cell {i} (provided): locked (metadata editable/deletable false)")
        elif IMPORTS_TAG in tags:
            import_cells.append(cell)
            put(cell, want["imports"], f"cell {i} (imports)")
        elif grading_text.tag_of(tags):
            tag = grading_text.tag_of(tags)
            seen_grading.append(tag)
            put(cell, grading_text.render(tag, assignment, "en"), f"cell {i} ({tag})", "grading.yml")
        elif time_text.tag_of(tags):
            tag = time_text.tag_of(tags)
            put(cell, time_text.render(tag, assignment, "en", nb), f"cell {i} ({tag})", time_text.FIGURES.name)
        else:
            parsed = _question_config(cell)
            if parsed is not None:
                conf, header = parsed
                qname = conf.get("name")
                if qname not in questions:
                    raise SyncError(f"cell {i}: question {qname!r} is not in grading.yml for {assignment}")
                seen_questions.append(qname)
                if conf.get("points") != questions[qname]:
                    conf["points"] = questions[qname]
                    cell["source"] = _render_question_config(conf, header)
                    changes.append(f"cell {i} (question {qname}): points set to {questions[qname]} from grading.yml")
    problems = []
    for name in want["names"]:
        if seen_solutions.count(name) != 1:
            problems.append(f"needs exactly one {SOLUTION_TAG} cell for {name} (found {seen_solutions.count(name)})")
    for q in questions:
        if seen_questions.count(q) != 1:
            problems.append(f"needs exactly one BEGIN QUESTION cell named {q} (found {seen_questions.count(q)})")
    if want["provided"] is not None and len(provided_cells) != 1:
        problems.append(f"needs exactly one {PROVIDED_TAG} cell (found {len(provided_cells)})")
    if len(import_cells) != 1:
        problems.append(f"needs exactly one {IMPORTS_TAG} cell (found {len(import_cells)})")
    # at most one of each generated grading cell (tests/test_grading_text.py asks every
    # notebook for its "How you are graded"), the run's only beside a training_run question
    most = {grading_text.TAG: 1, grading_text.RUN_TAG: int(grading_text.RUN_QUESTION in questions)}
    for tag, n in most.items():
        if seen_grading.count(tag) > n:
            problems.append(f"has {seen_grading.count(tag)} markdown cells tagged {tag} (at most {n})")
    if problems:
        raise SyncError(f"{assignment}: " + "; ".join(problems))
    return changes


def read_notebook(path):
    return nbformat.read(str(path), as_version=4)


def write_notebook(nb, path):
    """Write a notebook deterministically (nbformat's layout, one trailing newline)."""
    text = nbformat.writes(nb)
    if not text.endswith("\n"):
        text += "\n"
    Path(path).write_text(text, encoding="utf-8")


def sync(assignments, check=False, root=None):
    """Sync every master notebook; with `check`, only report. Returns [Drift]."""
    drifts = []
    for assignment, questions in assignments.items():
        path = master_path(assignment, root)
        if not path.exists():
            raise SyncError(f"missing master notebook {path}")
        nb = read_notebook(path)
        changes = sync_notebook(nb, assignment, questions)
        drift = Drift(assignment, path, changes, nb)
        if changes and not check:
            write_notebook(nb, path)
        drifts.append(drift)
    return drifts

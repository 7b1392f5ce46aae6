"""How a notebook is written, read the way the grader runs it: what makes a question lose
points for the notebook's form rather than for what its code computes.

The grader runs the code cells in notebook order, top to bottom, in a fresh process that
has Python's standard library and `PACKAGES`, nothing else, and runs no shell line or
IPython magic (`!pip install ...`, `%pip ...`). A notebook written against a kernel that
differs (a package installed there, cells run out of order) passes where it was written
and loses questions where it is graded. `findings(cells)` reads the cells' text (never
runs them) and names each such place, as plain data:

- `form_package`: an import of a package the grader lacks (`import einops`), with the shell
  line that installed it where there is one (`!pip install einops`);
- `form_later_name`: a name a cell uses as it runs, bound only by a later cell (the
  student ran that one first).

Each finding: {"key": a message key (messages/judge.yml), "fields": its fields, "cell":
the cell's index, "names": the top-level names it costs (the cell's own definitions, the
functions that use the package)}. Standard library only: it runs in the reader's limited
helper (`reader.read_bytes`), and its source goes as it is into the notebooks' public
checks (`autograder.build`), so the notebook, `check` and the grade find the same.
"""

import ast
import builtins
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

Finding = dict[str, Any]  # {"key", "fields", "cell", "names"}
Parsed = tuple[int, str, str, ast.Module | None]  # (index, label, text, tree or None)

# What the grader has for student code beside Python's standard library: one source for the
# notebooks' text ("How you are graded"), for what this module finds and for the imports the
# worker lets a cell make (`worker.runner`).
PACKAGES = ("torch", "numpy", "matplotlib")
STAND_INS = ("mpl_toolkits", "seaborn")  # plotting the worker stands in for (`worker.plots`): it draws nothing
KIT_STATEMENTS = ("otter", "__future__")  # the set-up cell's `import otter` (removed before the grader runs a cell)
ALLOWED = PACKAGES + STAND_INS + KIT_STATEMENTS
# Names IPython defines in a notebook's namespace (not bound by any cell).
IPYTHON_NAMES = ("In", "Out", "get_ipython", "display", "exit", "quit", "_", "__", "___", "_ih", "_oh", "_dh")
TEXT_CHARS = 60
KEYS = ("form_package", "form_package_installed", "form_later_name")  # messages/form.yml
_SHELL = re.compile(r"^\s*(?:!|%{1,2}pip\b|%{1,2}conda\b)\s*(.*)$")
_INSTALL = re.compile(r"(?:pip3?|conda|mamba|uv\s+pip)\s+install\s+(.*)$")


def _stdlib() -> frozenset[str] | None:
    names = getattr(sys, "stdlib_module_names", None)
    return frozenset(names) if names else None


def _module_of(name: str) -> str:
    """The importable top-level name of a package as pip names it (`scikit-learn` is `sklearn`
    only by convention: the pip name with dashes as underscores, lowercased)."""
    return re.split(r"[<>=!~\[;@ ]", name.strip(), maxsplit=1)[0].replace("-", "_").lower()


def _installs(lines: Iterable[str]) -> dict[str, str]:
    """{top-level module: the shell line} of the `pip install` (or `%pip`, `conda`) lines."""
    found: dict[str, str] = {}
    for line in lines:
        m = _SHELL.match(line)
        if not m:
            continue
        text = line.strip()
        inst = _INSTALL.search(text)
        if not inst:
            continue
        for word in inst.group(1).split():
            if not word.startswith("-"):
                found.setdefault(_module_of(word), text[:TEXT_CHARS])
    return found


def _without_shell(source: str) -> str:
    """The cell's text as Python: shell and magic lines kept as `pass` (line numbers stay)."""
    out = []
    for line in source.split("\n"):
        m = re.match(r"^(\s*)[%!]", line)
        out.append(f"{m.group(1)}pass" if m else line)
    return "\n".join(out)


def _is_kit_init(stmt: ast.stmt) -> bool:
    """The notebook's set-up `try: import otter ...` (the grader removes it whole)."""
    return isinstance(stmt, ast.Try) and any(
        isinstance(n, ast.Import) and any(a.name.split(".")[0] == "otter" for a in n.names) for n in stmt.body
    )


def _parse(source: str) -> ast.Module | None:
    """The cell's tree as the grader runs it (its set-up statement left out), or None."""
    try:
        tree = ast.parse(_without_shell(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    tree.body = [s for s in tree.body if not _is_kit_init(s)]
    return tree


def _guarded_imports(tree: ast.Module) -> list[tuple[str, int, tuple[str, ...]]]:
    """[(top-level module, line, names it binds)] of the imports that run unguarded: an import
    in the body of a `try` that handles an error is the notebook's own fallback."""
    found: list[tuple[str, int, tuple[str, ...]]] = []

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":  # try ... except* too
            t: Any = node
            for child in t.body:
                visit(child, guarded or bool(t.handlers))
            for part in (t.handlers, t.orelse, t.finalbody):
                for child in part:
                    visit(child, guarded)
            return
        if not guarded and isinstance(node, ast.Import):
            for a in node.names:
                found.append((a.name.split(".")[0], node.lineno, (a.asname or a.name.split(".")[0],)))
        elif not guarded and isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.module.split(".")[0], node.lineno, tuple(a.asname or a.name for a in node.names)))
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


def _runtime_nodes(stmt: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a top-level statement that run when its cell runs: a function's body and
    a lambda's do not (its decorators, defaults and a class's body do)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack += node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.Lambda):
            stack += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        else:
            stack += list(ast.iter_child_nodes(node))


def _binds(stmt: ast.AST) -> set[str]:
    """Names a top-level statement binds when it runs (def, class, import, any store)."""
    names: set[str] = set()
    for node in _runtime_nodes(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _uses(stmt: ast.AST) -> set[str]:
    """Names a top-level statement reads as it runs, less those it binds itself (a loop's or a
    comprehension's variable)."""
    read = {n.id for n in _runtime_nodes(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return read - _binds(stmt)


def _star(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree))


def _top_defs(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def findings(cells: Iterable[tuple[int, str, str]], allowed: Sequence[str] = ALLOWED) -> list[Finding]:
    """The form findings of a notebook's code cells [(index, label, text)] in notebook order
    (see the module's docstring): at most one per package and one per cell for later names."""
    parsed: list[Parsed] = [(index, label, text, _parse(text)) for index, label, text in cells]
    stdlib = _stdlib()
    installs: dict[str, str] = {}
    for _, _, text, _ in parsed:
        for module, line in _installs(text.split("\n")).items():
            installs.setdefault(module, line)
    out: list[Finding] = []
    users: dict[str, set[str]] = {}  # alias -> top-level defs (any cell) that read it
    for _, _, _, tree in parsed:
        for d in _top_defs(tree) if tree is not None else ():
            for n in ast.walk(d):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    users.setdefault(n.id, set()).add(d.name)
    seen: set[str] = set()
    for index, label, _, tree in parsed:
        if tree is None or stdlib is None:
            continue
        own = _bound_by(tree)
        # an import the cell runs as it loads: the cell stops there, its definitions lost
        loading = {
            n.lineno for s in tree.body for n in _runtime_nodes(s) if isinstance(n, (ast.Import, ast.ImportFrom))
        }
        for module, at, aliases in _guarded_imports(tree):
            if module in allowed or module in stdlib or module in seen:
                continue
            seen.add(module)
            costs = set(own) if at in loading else set()
            for alias in aliases:
                costs |= users.get(alias, set())
            for d in _top_defs(tree):  # a function that imports it itself
                if any(isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno == at for n in ast.walk(d)):
                    costs.add(d.name)
            costs = _closure(costs, users)
            shell = installs.get(_module_of(module))
            out.append(
                {
                    "key": "form_package_installed" if shell else "form_package",
                    "fields": {
                        "package": module[:TEXT_CHARS],
                        "cell": label,
                        "line": at,
                        "packages": ", ".join(PACKAGES),
                        **({"shell": shell} if shell else {}),
                    },
                    "cell": index,
                    "names": sorted(costs),
                }
            )
    for found in _later_names(parsed):
        found["names"] = sorted(_closure(set(found["names"]), users))
        out.append(found)
    return out


def _closure(names: set[str], users: dict[str, set[str]]) -> set[str]:
    """`names` and every top-level function or class that reads one of them, at any depth
    (a graded function that calls a helper which uses the package)."""
    names, todo = set(names), list(names)
    while todo:
        for user in users.get(todo.pop(), ()):
            if user not in names:
                names.add(user)
                todo.append(user)
    return names


def _bound_by(tree: ast.Module) -> set[str]:
    return set().union(set(), *(_binds(s) for s in tree.body))


def _later_names(parsed: Sequence[Parsed]) -> list[Finding]:
    """`form_later_name` findings: a name read as a cell runs, bound by no cell before it (nor
    earlier in it) and by a later one. The grader's run of that cell stops there: what the
    rest of it defines is lost."""
    trees = [(index, label, tree) for index, label, _, tree in parsed if tree is not None]
    if any(_star(tree) for _, _, tree in trees):
        return []  # what a star import binds is unknown here
    bound_in = [(label, _bound_by(tree)) for _, label, tree in trees]
    known = set(dir(builtins)) | set(IPYTHON_NAMES)
    out: list[Finding] = []
    bound: set[str] = set()
    for pos, (index, label, tree) in enumerate(trees):
        for stmt in tree.body:
            found = None
            for name in sorted(_uses(stmt) - bound - known):
                later = next((lab for lab, names in bound_in[pos + 1 :] if name in names), None)
                if later is not None:
                    found = {"name": name[:TEXT_CHARS], "cell": label, "later": later, "line": stmt.lineno}
                    break
            if found:
                out.append(
                    {"key": "form_later_name", "fields": found, "cell": index, "names": sorted(bound_in[pos][1])}
                )
                break  # the cell stops at its first error: what follows it never runs
            bound |= _binds(stmt)
    return out

"""Trusted checks on the student's source (parsed, never run).

They run in the notebook reader's limited helper process
(`autograder.judge.reader`), which sends their findings back to the judge as
plain data (`Submission.findings`); the judge itself parses no student code.

`forbidden_uses(cells, target, provided)` finds calls to torch's built-in
attention (`scaled_dot_product_attention`, `MultiheadAttention`,
`multi_head_attention_forward`) in `target` and in every notebook-level
function or class it reaches, through attribute access (`F.scaled_...`),
imported aliases (`from torch.nn.functional import ... as sdpa`) and string
look-ups (`getattr(F, "scaled_dot_product_attention")`). Names of provided
functions (the reference's own `scaled_dot_product_attention` in the
multi-head notebook) are allowed.

`tracing_tampering(cells)` finds what could switch off or fool the worker's
operation counter: torch's tracing internals, and any reach for the kit's own
modules (`autograder`: the counter lives in `autograder.worker.runner`).

Each cell is parsed on its own: a cell that cannot be parsed (a syntax error,
or nesting or size past what the parser allows) is skipped by both, and
`findings` scans its text for the same names instead (the reader marks the
cell `unparsed`).
"""

import ast
import re
from collections.abc import Container, Iterable, Iterator
from typing import Any, Protocol

from autograder.protocol.forbidden import FORBIDDEN

# What switches off or replaces the tracing of torch calls that the worker's
# operation counter relies on (the vectorisation and from-scratch checks).
TRACING_INTERNALS = (
    "_C",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "TorchFunctionMode",
    "TorchDispatchMode",
    "_disabled_torch_function_impl",
    "_pop_mode",
    "_push_mode",
    "_python_dispatch",
    "overrides",
    "__torch_function__",
    "__torch_dispatch__",
    "setprofile",
    "settrace",
)
KIT = "autograder"
KIT_FINDING = f"reaches for the grader's own modules (`{KIT}`)"
# What a worker holds of the kit is `autograder` itself, its protocol and its
# worker (where the counter lives): any reach for the kit counts, except one
# into its private package (a hunt for answers: that package is empty in a
# worker, which is the sandbox's business, not the counter's).
PRIVATE = "private"
# A string naming the kit's modules: the whole string a module path into it, or an import of it.
_KIT_PATH = re.compile(rf"\s*{KIT}((?:\.[A-Za-z_]\w*)*)\s*")
_KIT_IMPORT = re.compile(rf"\b(?:import|from)\s+{KIT}(?!\.{PRIVATE}\b)\b")


class SourceCell(Protocol):
    """A cell as the checks read it (the reader's, or a `notebook.Cell`)."""

    index: int
    source: str


def _reaches_kit(path: str) -> bool:
    """Whether a dotted module path is the kit's, outside its private package."""
    parts = path.split(".")
    return parts[0] == KIT and (len(parts) == 1 or parts[1] != PRIVATE)


def _kit_in_string(text: str) -> bool:
    m = _KIT_PATH.fullmatch(text)
    return bool(m and not m.group(1).startswith(f".{PRIVATE}")) or bool(_KIT_IMPORT.search(text))


PARSE_ERRORS = (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError)


def parse(source: str) -> tuple[ast.Module | None, str | None]:
    """(syntax tree, None), or (None, why it cannot be parsed: one line)."""
    try:
        return ast.parse(source), None
    except SyntaxError as exc:
        return None, f"SyntaxError: {exc.msg}"
    except RecursionError:
        return None, "nested too deeply to parse"
    except MemoryError:
        return None, "too large or nested too deeply to parse within the reader's memory limit"
    except (ValueError, OverflowError) as exc:
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"


def _parsed(cells: Iterable[SourceCell]) -> Iterator[tuple[SourceCell, ast.Module]]:
    """(cell, syntax tree) for every cell that parses (a broken cell fails on its own)."""
    for cell in cells:
        tree, _ = parse(cell.source)
        if tree is not None:
            yield cell, tree


class Analysis:
    """What the checks need of the parsed cells: top-level definitions and
    import aliases across the notebook, and tracing findings per cell. Trees
    are added one cell at a time; only the definitions' subtrees are kept."""

    def __init__(self) -> None:
        self.defs: dict[str, tuple[int, ast.stmt]] = {}  # name -> (cell index, node)
        self.aliases: dict[str, str] = {}  # local name -> what it was imported as
        self.tracing: list[str] = []

    def add(self, cell_index: int, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module or ''}.{a.name}"
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[node.name] = (cell_index, node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.defs.setdefault(t.id, (cell_index, node))
        self.tracing += _tracing_in(cell_index, tree)

    def direct(self, name: str) -> tuple[dict[str, str | None], set[str]]:
        """{finding: the provided name that excuses it, or None} in `name`'s own
        definition, and the other definitions it names."""
        defs, aliases = self.defs, self.aliases
        cell_index, node = defs[name]
        found: dict[str, str | None] = {}
        refs: set[str] = set()

        def note(line: str, excuse: str | None = None) -> None:
            # A line found both excusable and not (two uses on one line) is never excused.
            found[line] = excuse if found.get(line, excuse) == excuse else None

        for sub in ast.walk(node):
            where = f"cell {cell_index}, line {getattr(sub, 'lineno', '?')}"
            if isinstance(sub, ast.Attribute) and sub.attr in FORBIDDEN:
                note(f"{where}: uses torch's built-in `{sub.attr}`")
            elif isinstance(sub, ast.Name):
                if sub.id in aliases and aliases[sub.id].rsplit(".", 1)[-1] in FORBIDDEN and sub.id not in defs:
                    note(f"{where}: uses torch's built-in `{aliases[sub.id]}`")
                elif sub.id in FORBIDDEN and sub.id not in defs:
                    note(f"{where}: uses torch's built-in `{sub.id}`", sub.id)
                elif sub.id in defs and sub.id != name:
                    refs.add(sub.id)
            elif isinstance(sub, ast.Call):
                for arg in sub.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        for f in FORBIDDEN:
                            if f in arg.value:
                                note(f"{where}: looks up `{f}` by name", f)
        return found, refs

    def forbidden(self, target: str) -> dict[str, str | None]:
        """{finding: the provided name that excuses it, or None}: every use of
        torch's built-in attention in `target` and the definitions it reaches."""
        found: dict[str, str | None] = {}
        seen: set[str] = set()
        todo = [target]
        while todo:
            name = todo.pop()
            if name in seen or name not in self.defs:
                continue
            seen.add(name)
            own, refs = self.direct(name)
            for line, excuse in own.items():
                found[line] = excuse if found.get(line, excuse) == excuse else None
            todo += refs
        return found

    def forbidden_all(self, keep: int = 5) -> dict[str, dict[str, str | None]]:
        """{name: {finding: excuse}} for every definition that reaches a finding,
        each keeping its `keep` first findings per excuse (None included): enough
        for the first one a given set of provided names leaves. One pass over the
        definitions (strongly connected components, in the order Tarjan's
        algorithm closes them: a component after everything it reaches)."""
        direct = {n: self.direct(n) for n in self.defs}
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on: set[str] = set()
        stack: list[str] = []
        result: dict[str, dict[str, str | None]] = {}
        for root in direct:
            if root in index:
                continue
            index[root] = low[root] = len(index)
            stack.append(root)
            on.add(root)
            work = [(root, iter(sorted(direct[root][1])))]
            while work:
                v, it = work[-1]
                for w in it:
                    if w not in index:
                        index[w] = low[w] = len(index)
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(sorted(direct[w][1]))))
                        break
                    if w in on:
                        low[v] = min(low[v], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[v])
                    if low[v] == index[v]:
                        members = []
                        while True:
                            w = stack.pop()
                            on.discard(w)
                            members.append(w)
                            if w == v:
                                break
                        merged: dict[str, str | None] = {}
                        inside = set(members)
                        parts = [direct[m][0] for m in members]
                        parts += [result[r] for r in {r for m in members for r in direct[m][1]} - inside if r in result]
                        for part in parts:
                            for line, excuse in part.items():
                                merged[line] = excuse if merged.get(line, excuse) == excuse else None
                        by_excuse: dict[str | None, list[str]] = {}
                        for line in sorted(merged):
                            kept = by_excuse.setdefault(merged[line], [])
                            if len(kept) < keep:
                                kept.append(line)
                        merged = {line: e for e, lines in by_excuse.items() for line in lines}
                        for m in members:
                            result[m] = merged
        return {n: found for n, found in result.items() if found}


def _tracing_in(cell_index: int, tree: ast.Module) -> list[str]:
    findings: list[str] = []
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    private_bases = {
        id(n.value)
        for n in ast.walk(tree)  # `autograder.private...`: not a reach for the counter
        if isinstance(n, ast.Attribute) and n.attr == PRIVATE and isinstance(n.value, ast.Name)
    }
    for node in ast.walk(tree):
        where = f"cell {cell_index}, line {getattr(node, 'lineno', '?')}"
        names: list[str] = []
        kit = False
        if isinstance(node, ast.Attribute):
            names = [node.attr]
            kit = node.attr == KIT
        elif isinstance(node, ast.Name):
            kit = node.id == KIT and id(node) not in private_bases
        elif isinstance(node, ast.Import):
            names = [p for a in node.names for p in a.name.split(".")]
            kit = any(_reaches_kit(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = [p for a in node.names for p in a.name.split(".")] + (node.module or "").split(".")
            kit = any(_reaches_kit(f"{node.module}.{a.name}") for a in node.names) if node.module else False
        elif isinstance(node, ast.FunctionDef):
            names = [node.name]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if len(node.value) < 60:
                names = [p for p in node.value.split(".") if p]
            kit = id(node) not in docstrings and _kit_in_string(node.value)
        for n in names:
            if n in TRACING_INTERNALS:
                findings.append(f"{where}: uses torch's tracing internals (`{n}`)")
        if kit:
            findings.append(f"{where}: {KIT_FINDING}")
    return findings


def forbidden_uses(cells: Iterable[SourceCell], target: str, provided: Container[str] = ()) -> list[str]:
    """A list of one-line findings; empty when the target is from scratch."""
    analysis = Analysis()
    for cell, tree in _parsed(cells):
        analysis.add(cell.index, tree)
    return sorted(
        line for line, excuse in analysis.forbidden(target).items() if excuse is None or excuse not in provided
    )


def tracing_tampering(cells: Iterable[SourceCell]) -> list[str]:
    """One-line findings of torch internals that could hide calls from the
    worker's counter, and of reaches for the kit's own modules, anywhere in
    the notebook: attribute access, imports and names looked up by string.
    (Deliberately obfuscated code can still get past a check of the source:
    docs/pages/architecture/guarantees.md, "Not guaranteed".)"""
    findings: list[str] = []
    for cell, tree in _parsed(cells):
        findings += _tracing_in(cell.index, tree)
    return sorted(set(findings))


_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _mentions(text: str) -> tuple[list[str], list[str]]:
    """The checked names a cell's text mentions (for a cell that could not be parsed)."""
    words = set(_WORDS.findall(text))
    tracing = sorted(words & set(TRACING_INTERNALS) | ({KIT} & words))
    return tracing, sorted(words & set(FORBIDDEN))


def findings(parsed: Iterable[tuple[SourceCell, ast.Module | None, str | None]]) -> dict[str, Any]:
    """Every finding of the notebook, as plain data, from (cell, tree or None,
    why it did not parse) for each cell (each cell parsed once, by the caller;
    an iterator keeps one tree at a time, and of it only the definitions):

        forbidden  {top-level name: [findings]}: `forbidden_uses` of each name that has any,
                   no name excused (the first few per excuse)
        excused    {finding: provided name}: the findings a provided function of that name excuses
        tracing    [findings]: `tracing_tampering`
        unchecked  [findings]: built-in attention named in a cell that could not be
                   parsed for its size or nesting (it counts against every function)
    """
    analysis = Analysis()
    unchecked: list[str] = []
    tracing: list[str] = []
    for cell, tree, why in parsed:
        if tree is not None:
            analysis.add(cell.index, tree)
            continue
        assert why is not None  # `parse` says why with every tree it could not make
        if why.startswith("SyntaxError"):
            continue  # the worker cannot compile it either: nothing in it runs
        words_tracing, words_forbidden = _mentions(cell.source)
        for w in words_tracing:
            what = KIT_FINDING if w == KIT else f"uses torch's tracing internals (`{w}`)"
            tracing.append(f"cell {cell.index}: could not be parsed to check it ({why}), and {what}")
        for w in words_forbidden:
            unchecked.append(f"cell {cell.index}: could not be parsed to check it ({why}), and it names `{w}`")
    forbidden: dict[str, list[str]] = {}
    excused: dict[str, str] = {}
    for name, found in analysis.forbidden_all().items():
        forbidden[name] = sorted(found)
        excused.update({line: excuse for line, excuse in found.items() if excuse is not None})
    return {
        "forbidden": forbidden,
        "excused": excused,
        "tracing": sorted(set(analysis.tracing + tracing)),
        "unchecked": unchecked,
    }

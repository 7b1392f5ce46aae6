"""Trusted checks on the student's source (parsed by the judge, never run).

`forbidden_uses(cells, target, provided)` finds calls to torch's built-in
attention (`scaled_dot_product_attention`, `MultiheadAttention`,
`multi_head_attention_forward`) in `target` and in every notebook-level
function or class it reaches, through attribute access (`F.scaled_...`),
imported aliases (`from torch.nn.functional import ... as sdpa`) and string
look-ups (`getattr(F, "scaled_dot_product_attention")`). Names of provided
functions (the reference's own `scaled_dot_product_attention` in the
multi-head notebook) are allowed.
"""
import ast

FORBIDDEN = ("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention")


def _parsed(cells):
    """(cell, syntax tree) for every cell that parses (a broken cell fails on its own)."""
    for cell in cells:
        try:
            yield cell, ast.parse(cell.source)
        except SyntaxError:
            continue


def _parse_cells(cells):
    defs, aliases = {}, {}
    for cell, tree in _parsed(cells):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module or ''}.{a.name}"
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[node.name] = (cell.index, node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        defs.setdefault(t.id, (cell.index, node))
    return defs, aliases


def forbidden_uses(cells, target, provided=()):
    """A list of one-line findings; empty when the target is from scratch."""
    defs, aliases = _parse_cells(cells)
    findings, seen, todo = [], set(), [target]
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        cell_index, node = defs[name]
        for sub in ast.walk(node):
            where = f"cell {cell_index}, line {getattr(sub, 'lineno', '?')}"
            if isinstance(sub, ast.Attribute) and sub.attr in FORBIDDEN:
                findings.append(f"{where}: uses torch's built-in `{sub.attr}`")
            elif isinstance(sub, ast.Name):
                if sub.id in aliases and aliases[sub.id].rsplit(".", 1)[-1] in FORBIDDEN and sub.id not in defs:
                    findings.append(f"{where}: uses torch's built-in `{aliases[sub.id]}`")
                elif sub.id in FORBIDDEN and sub.id not in defs and sub.id not in provided:
                    findings.append(f"{where}: uses torch's built-in `{sub.id}`")
                elif sub.id in defs and sub.id != name:
                    todo.append(sub.id)
            elif isinstance(sub, ast.Call):
                for arg in sub.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        for f in FORBIDDEN:
                            if f in arg.value and f not in provided:
                                findings.append(f"{where}: looks up `{f}` by name")
    return sorted(set(findings))


# What switches off or replaces the tracing of torch calls that the worker's
# operation counter relies on (the vectorisation and from-scratch checks).
TRACING_INTERNALS = ("_C", "DisableTorchFunction", "DisableTorchFunctionSubclass", "TorchFunctionMode",
                     "TorchDispatchMode", "_disabled_torch_function_impl", "_pop_mode", "_push_mode",
                     "_python_dispatch", "overrides", "__torch_function__", "__torch_dispatch__",
                     "setprofile", "settrace")


def tracing_tampering(cells):
    """One-line findings of torch internals that could hide calls from the
    worker's counter, anywhere in the notebook: attribute access, imports and
    names looked up by string. (Deliberately obfuscated code can still get
    past a check of the source: README, "What the grader does not guarantee".)"""
    findings = []
    for cell, tree in _parsed(cells):
        for node in ast.walk(tree):
            where = f"cell {cell.index}, line {getattr(node, 'lineno', '?')}"
            names = []
            if isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [p for a in node.names for p in a.name.split(".")]
                names += (node.module or "").split(".") if isinstance(node, ast.ImportFrom) else []
            elif isinstance(node, ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 60:
                names = [p for p in node.value.split(".") if p]
            for n in names:
                if n in TRACING_INTERNALS:
                    findings.append(f"{where}: uses torch's tracing internals (`{n}`)")
    return sorted(set(findings))

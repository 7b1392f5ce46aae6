"""The layout shows the trust boundary, and the code keeps to it.

Every import of the kit's modules is read from the source (AST, module-level
and inside functions alike): the worker side imports only the standard
library, torch and the protocol; the sandbox never imports the judge, the
verbs or the private root; only the judge, the verbs that need it and the
suites themselves import the private root; no two modules of the kit import
each other.
"""

import ast
import sys

import pytest

from autograder import layout

PACKAGE = layout.PACKAGE
STDLIB = set(sys.stdlib_module_names)


def module_name(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def kit_modules():
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "private" and layout.CATALOG_FOLDER in rel.parts[:-1]:
            continue  # catalog entries are student code, not the kit's
        out[module_name(path)] = path
    return out


def imports(path, runtime_only=False):
    """Every module name `path` imports (relative imports resolved); with `runtime_only`, not
    those under `if TYPE_CHECKING:` (type annotations' imports, which never run)."""
    tree = ast.parse(path.read_text())
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    typing_only = (
        {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If)
            and getattr(block.test, "id", getattr(block.test, "attr", None)) == "TYPE_CHECKING"
            for stmt in block.body
            for n in ast.walk(stmt)
        }
        if runtime_only
        else set()
    )
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in kit_modules()}
    return found


def side(name, *prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_worker_side_imports_only_the_standard_library_torch_and_the_protocol():
    worker_side = {
        n: p
        for n, p in kit_modules().items()
        if side(n, "autograder.worker", "autograder.protocol") or n == "autograder"
    }
    assert len(worker_side) >= 4, worker_side
    for name, path in worker_side.items():
        for mod in imports(path):
            top = mod.split(".")[0]
            ok = top in STDLIB or top == "torch" or side(mod, "autograder.protocol", "autograder.worker")
            assert ok, (
                f"{name} imports {mod}: the worker side may import the standard library, torch and the protocol only"
            )


def test_the_sandbox_never_imports_the_judge_the_verbs_or_the_private_root():
    # (and the messages catalog: the reasons a worker died are student-facing text, nothing secret)
    allowed = (
        "autograder.sandbox",
        "autograder.protocol",
        "autograder.worker",
        "autograder.layout",
        "autograder.messages",
        "autograder.faults",  # the kit's error types (standard library only): whose fault a dead worker is
    )
    for name, path in kit_modules().items():
        if not side(name, "autograder.sandbox"):
            continue
        for mod in imports(path):
            if mod.split(".")[0] == "autograder":
                assert side(mod, *allowed) or mod == "autograder", f"{name} imports {mod}"


@pytest.mark.slow  # scans the imports of every module of the kit (14 s in a quiet full run)
def test_only_the_judge_side_reaches_the_private_root():
    may = (
        "autograder.judge",
        "autograder.private",
        "autograder.build",
        "autograder.audit",
        "autograder.grade",
        "autograder.demo",
    )
    for name, path in kit_modules().items():
        for mod in imports(path):
            if side(mod, "autograder.private") and not side(name, *may):
                pytest.fail(f"{name} imports {mod}")


@pytest.mark.slow  # imports every module of the kit (10 s under a full run's load)
def test_no_two_modules_of_the_kit_import_each_other():
    modules = kit_modules()
    graph = {n: {m for m in imports(p, runtime_only=True) if m in modules and m != n} for n, p in modules.items()}
    # A package's __init__ importing its own submodules is how packages work; a
    # submodule importing its package's __init__ back is the cycle to avoid.
    cycles = sorted(
        {
            tuple(sorted((a, b)))
            for a, deps in graph.items()
            for b in deps
            if a in graph.get(b, ()) and not (side(b, a) or side(a, b))
        }
    )
    assert not cycles, cycles


def test_every_private_file_lives_under_the_one_private_root():
    """Solutions, suites and the catalog are nowhere else in the package."""
    for path in PACKAGE.rglob("*"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "private":
            continue
        assert path.name not in ("suites", "catalog", "solutions"), rel
        if path.suffix == ".py":
            text = path.read_text()
            assert "def masked_softmax(" not in text or rel.parts[0] == "audit", rel


def _assignments_own(rel):
    """An assignment's own places in the package: its folder under the private root, its
    reference (private/solutions/, the top-level solutions/ linked), its grading.yml entry."""
    return rel.parts[:2] in (("private", "assignments"), ("private", "solutions")) or rel.as_posix() == "grading.yml"


def test_no_generic_layer_names_an_assignment():
    """`grep -w` of each assignment's name in the package, outside the assignments' own
    places, finds nothing (docstrings and comments too)."""
    import re

    from autograder import declarations

    names = declarations.names()
    assert len(names) >= 5, names
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    found = {}
    for path in sorted(PACKAGE.rglob("*")):
        rel = path.relative_to(PACKAGE)
        if not path.is_file() or "__pycache__" in rel.parts or _assignments_own(rel):
            continue
        hits = sorted(set(word.findall(path.read_text(encoding="utf-8", errors="replace"))))
        if hits:
            found[rel.as_posix()] = hits
    assert not found, (
        f"a generic layer names an assignment (ask autograder.declarations; a placeholder in text): {found}"
    )


def test_an_assignments_synthetic_class_is_the_audits_and_writes_its_graded_functions():
    """The similarity audit draws its class from an assignment's own folder (found through
    declarations, never named by the audit), and no grading zip or suite carries it."""
    import random
    from pathlib import Path

    from autograder import config, declarations

    classes = {n: declarations.similar_class(n) for n in declarations.names()}
    classes = {n: m for n, m in classes.items() if m is not None}
    assert classes, "no assignment declares a synthetic class: the similarity audit has nothing to draw"
    assert layout.audit_only(Path(layout.SIMILAR_CLASS))
    for name, students in classes.items():
        assert set(students.FUNCTIONS) <= set(config.load().questions(name)), name
        one = students.honest_student(random.Random(0))
        assert sorted(one) == sorted(students.FUNCTIONS), name
        assert all(f"def {f}(" in src for f, src in one.items()), name


# The benches that still name an assignment: each measures one assignment's run in the grader
# over seeds, with figures of its own task; to its run's declaration, one bench taking --assignment.
def test_no_bench_names_an_assignment():
    """A bench finds its assignments (`--assignment`, default every one grading.yml lists:
    bench/chosen.py); `grep -w` finds no assignment's name in bench/."""
    import re

    from autograder import declarations

    word = re.compile(r"\b(" + "|".join(map(re.escape, declarations.names())) + r")\b")
    bench = layout.KIT_ROOT / "bench"
    found = {p.name for p in sorted(bench.glob("*.py")) if word.search(p.read_text(encoding="utf-8"))}
    assert not found, f"a bench names an assignment (take --assignment): {found}"

"""Generated files stay in sync with their single sources (golden files with an
update switch: `python -m autograder build` rewrites them)."""

import ast
import copy
import inspect
import json

import nbformat
import pytest

from autograder.audit.catalog import fill_reference, reference_sources
from autograder.build import assign, sync
from conftest import ASSIGNMENTS, ROOT, template


@pytest.mark.slow
def test_master_notebooks_templates_and_examples_are_in_sync(dist):
    """Fails on drift between solutions/ or grading.yml and the committed
    master notebooks, student templates or example submissions. The run's one
    `build --dist-only` (the `dist` fixture) is that check: it compares what
    `build --check` compares, in the same pass (`build.run`'s `compare`), and
    writes its zips and wheel only where nothing drifted (else the fixture
    fails with the drift, exit 1)."""
    assert sorted(p.name for p in dist.glob("*/*-autograder.zip")), "no zip: the build found drift"
    assert list((dist / "public").glob("*.whl")), "no public wheel"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_sync_restores_an_edited_solution_cell(assignment):
    from autograder import config

    nb = nbformat.read(sync.master_path(assignment), as_version=4)
    edited = copy.deepcopy(nb)
    cell = next(c for c in edited.cells if sync.SOLUTION_TAG in c.metadata.get("tags", []))
    cell.source = cell.source.replace("# BEGIN SOLUTION NO PROMPT", "# BEGIN SOLUTION NO PROMPT\n    x = 1")
    changes = sync.sync_notebook(edited, assignment, config.load().questions(assignment))
    assert changes, "an edited solution cell is drift"
    assert edited == nb


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_template_has_stubs_not_solutions(assignment):
    nb = template(assignment)
    assign.check_no_leaks(nbformat.reads(json.dumps(nb), as_version=4), assignment)  # raises on a leaked line
    filled = fill_reference(nb, assignment)
    with pytest.raises(assign.AssignError):
        assign.check_no_leaks(nbformat.reads(json.dumps(filled), as_version=4), assignment)
    stubs = {}
    for cell in nb["cells"]:
        if "kit-solution" in cell["metadata"].get("tags", []):
            src = "".join(cell["source"])
            assert "BEGIN SOLUTION" not in src and "PROMPT" not in src
            tree = ast.parse(src)
            stubs[tree.body[0].name] = tree.body[0]
    refs = reference_sources(assignment)
    assert set(stubs) == set(refs)
    for name, ref_src in refs.items():
        ref = ast.parse(ref_src).body[0]
        stub = stubs[name]
        assert ast.get_docstring(stub) == ast.get_docstring(ref), f"{name} keeps its docstring"
        ref_fns = [n for n in ast.walk(ref) if isinstance(n, ast.FunctionDef)]
        stub_fns = {n.name: n for n in ast.walk(stub) if isinstance(n, ast.FunctionDef)}
        for fn in ref_fns:
            assert ast.dump(stub_fns[fn.name].args) == ast.dump(fn.args), f"{name}.{fn.name} keeps its signature"
            raises = [n for n in ast.walk(stub_fns[fn.name]) if isinstance(n, ast.Raise)]
            assert raises and "NotImplementedError" in ast.unparse(raises[0]) and "Task " in ast.unparse(raises[0])


def _provides(assignment):
    import importlib

    return getattr(importlib.import_module(f"autograder.private.solutions.{assignment}"), "PROVIDED", ())


@pytest.mark.parametrize("assignment", [a for a in ASSIGNMENTS if _provides(a)])
def test_provided_cells_hold_the_reference_source(assignment):
    import importlib

    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    nb = template(assignment)
    provided = "".join("".join(c["source"]) for c in nb["cells"] if "kit-provided" in c["metadata"].get("tags", []))
    assert provided.startswith("# PROVIDED:")
    for name in module.PROVIDED:
        assert inspect.getsource(getattr(module, name)).strip() in provided


def test_question_names_agree_everywhere():
    from autograder import config

    cfg = config.load()
    for a in ASSIGNMENTS:
        tests = template(a)["metadata"]["otter"]["tests"]
        assert list(cfg.questions(a)) == sorted(cfg.questions(a), key=list(cfg.questions(a)).index)
        assert set(tests) == set(cfg.questions(a)), "every question has public tests under its grading.yml name"
        suites = {
            p.stem.removeprefix("test_")
            for p in (ROOT / "autograder" / "private" / "assignments" / a).glob("test_*.py")
        }
        assert suites == set(cfg.questions(a)), "one hidden suite file per question"


def test_the_zip_slice_ships_what_provided_lists_even_when_no_reference_calls_it():
    """multi_head provides general_attention (for the one-head check of
    multi_head_general_attention) without calling it: the zip's sliced
    classic_attention must still define it, and nothing else graded there."""
    from autograder.build import package

    members = package.private_sources("multi_head")
    classic = members["kit/autograder/private/solutions/classic_attention.py"]
    assert "def general_attention(" in classic and "def masked_softmax(" in classic
    for other in ("def additive_attention(", "def dot_attention(", "def concat_attention("):
        assert other not in classic


def test_a_zip_carries_its_assignments_suites_and_nothing_of_the_audit():
    """An assignment's folder holds its suites beside the audit's parts (catalog/, battery*.py):
    the zip's private members are its suites, the shared library and references only."""
    from autograder import layout
    from autograder.build import package

    for assignment in ASSIGNMENTS:
        members = package.private_sources(assignment)
        own = f"kit/autograder/private/assignments/{assignment}/"
        mine = {n.removeprefix(own) for n in members if n.startswith(own)}
        folder = layout.suite(assignment)
        suites = {p.name for p in folder.glob("test_*.py")}
        assert suites and suites <= mine, assignment
        assert (folder / layout.CATALOG_FOLDER).is_dir() and not any(n.startswith("catalog/") for n in mine)
        assert not any(n.startswith(layout.BATTERY_PREFIX) for n in mine), mine
        assert layout.SIMILAR_CLASS not in mine, mine
        others = [n for n in members if "/private/assignments/" in n and not n.startswith(own)]
        assert others == ["kit/autograder/private/assignments/__init__.py"], others


def test_the_leak_check_reads_the_suites_not_the_audits_files():
    """A student notebook may show what only the audit's files hold (a battery case's copy of a
    stub's line), never a line of the suites: the leak check's hidden lines are the suites' own."""
    from autograder import layout

    def lines(paths):
        return {
            line.strip()
            for p in paths
            for line in p.read_text().split("\n")
            if len(line.strip()) >= 40 and not line.strip().startswith(("#", "import ", "from ", '"""'))
        }

    audit_lines = 0
    for assignment in ASSIGNMENTS:
        folder = layout.suite(assignment)
        files = sorted(folder.glob("*.py"))
        suites = lines(p for p in files if not layout.audit_only(p.relative_to(folder)))
        audit = lines(p for p in files if layout.audit_only(p.relative_to(folder))) - suites
        hidden = assign._hidden_suite_lines(assignment)
        assert suites and suites <= hidden, assignment
        assert not audit & hidden, (assignment, sorted(audit & hidden)[:3])
        audit_lines += len(audit)
    assert audit_lines, "no assignment's audit files hold a line of their own: the check above tests nothing"

"""Shared helpers for the kit's own tests, and the shape of the test command (below)."""

import ast
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import config, release
from autograder.sandbox.limits import Limits

# The kit's own tests read the English feedback unless a test chooses a language
# (grading.yml's default is pt-BR, the course's): $KIT_LANG sets the default
# for this process and the commands it runs.
os.environ.setdefault("KIT_LANG", "en")

ROOT = Path(__file__).resolve().parent.parent
# The registry of assignments is grading.yml: a new entry there is tested everywhere.
ASSIGNMENTS = tuple(config.load(ROOT / "grading.yml").assignments)


def limits(**overrides):
    """The kit's limits from grading.yml, with some changed for a test."""
    return Limits.from_config({**config.load(ROOT / "grading.yml").limits, **overrides})


def course_cfg(folder, data):
    """The Config of a course's grading.yml holding `data`, written in `folder` (the loader's
    cache cleared before and after, so no other test sees it)."""
    import yaml

    path = Path(folder) / "grading.yml"
    path.write_text(yaml.safe_dump(data))
    config._load.cache_clear()
    try:
        return config.load(path)
    finally:
        config._load.cache_clear()


def run_cli(*args, check=True, timeout=900, env=None):
    """Run `python -m autograder ARGS` as a user would; return the CompletedProcess."""
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"autograder {' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


def scores(results_json):
    data = json.loads(Path(results_json).read_text())
    return {t["name"]: (t["score"], t["max_score"]) for t in release.scored(data["tests"])}


EDITIONS = ("en", "pt-BR")  # the student notebook's editions (build writes both)


def template(assignment, lang="en"):
    """The committed student notebook `student_template/<lang>/<assignment>.ipynb`
    (English unless a test is about another edition)."""
    return json.loads((ROOT / "student_template" / lang / f"{assignment}.ipynb").read_text())


@pytest.fixture(scope="session")
def root():
    return ROOT


def notebook(*cells):
    """A minimal nbformat-4 notebook (a dict) holding `cells`."""
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def code_cell(source, tags=None):
    """A code cell (a dict) with `source` and, optionally, these tags."""
    return {
        "cell_type": "code",
        "source": source,
        "metadata": {"tags": tags} if tags else {},
        "outputs": [],
        "execution_count": None,
    }


_FORK_SERVERS = []  # this test process's fork server for `grade`, started on first use


def process_forkserver():
    """This test process's one fork server, started on first use: a fork server of its own (what
    `grade` and `check.run_checks` start when given none) imports torch, about 2 s of CPU a
    graded or checked notebook."""
    import atexit

    from autograder.sandbox.forkserver import ForkServer

    if not _FORK_SERVERS:
        _FORK_SERVERS.append(ForkServer())
        atexit.register(_FORK_SERVERS[0].close)
    return _FORK_SERVERS[0]


def is_failure_line(line):
    """Whether a feedback line reports one failure (`FAIL test: ...`, in any language): the
    tests' reading of what the student reads (the kit's pages read `QuestionResult.failures`)."""
    from autograder.messages import LANGUAGES, t

    return line.startswith(tuple(t("fail_prefix", lang) + " " for lang in LANGUAGES))


def is_cause_line(line):
    """Whether a feedback line states a likely cause (in any language; the kit's pages read
    `QuestionResult.causes_said`)."""
    from autograder.messages import LANGUAGES, t

    return line.startswith(tuple(t("cause_marker", lang).rstrip(":") for lang in LANGUAGES))


def grade(path, **kwargs):
    """`autograder.judge.grade` with this test process's one fork server (`process_forkserver`)."""
    from autograder.judge import grade as judge_grade

    return judge_grade(path, forkserver=process_forkserver(), **kwargs)


@pytest.fixture(scope="session")
def forkserver():
    """A fork server of the judge's own for a test's workers: this process's one
    (`process_forkserver`), which every module shares (one of its own a module cost a torch
    import, about 3.5 s of CPU)."""
    return process_forkserver()


def suite_skeleton(tmp_path, assignment, monkeypatch):
    """An assignments folder of the judge's shape holding one empty assignment folder, put in
    place of the kit's for this test (the suites' shared library stays the kit's): a test
    writes the suite files it needs into the returned folder."""
    import autograder.judge as judge
    from autograder import layout

    folders = tmp_path / "assignments"
    (folders / assignment).mkdir(parents=True)
    (folders / "__init__.py").write_text((layout.ASSIGNMENTS / "__init__.py").read_text())
    monkeypatch.setattr(judge, "ASSIGNMENTS", folders)
    return folders / assignment


def suite_files(pattern="*.py"):
    """Every file of the hidden suites: their shared library and each assignment's suites
    (its audit's parts aside, the catalog's student code and the battery's cases, and its
    settings' schemas, its run's with its text and its cost checks', staff-facing as
    autograder/schema.py's are)."""
    from autograder import layout

    def suites(root, p):
        rel = p.relative_to(root)
        own = rel.parts[1:]  # inside the assignment's folder
        settings = rel.name in ("run.py", "cost_settings.py")
        return root == layout.SUITES or not own or not (layout.audit_only(Path(*own)) or settings)

    return sorted(p for root in (layout.SUITES, layout.ASSIGNMENTS) for p in root.rglob(pattern) if suites(root, p))


# ---------------------------------------------------------------------------------------------
# The test command's shape: two tiers, parallel workers, heavy work built once.
#
# Tiers. `pytest tests -m "not slow"` is the quick tier for the edit-test loop. A test that
# needs a kernel, a build, a venv, a class of submissions or the browser is marked slow; an
# unmarked test that takes longer than QUICK_LIMIT_S (its setup, call and teardown together,
# with a core of its own: `_quick_limit`) fails, so the quick tier stays quick.
#
# Parallel. pyproject's addopts run the tests on xdist workers (one per core,
# `pytest_xdist_auto_num_workers`), which this file schedules in
# units (`_unit`): every test of a module that defines a module- or session-scoped fixture runs
# on one worker (the fixture is built once), every test that takes a fixture named in
# SHARED_GROUPS runs on that group's worker (`catalog`: the audit, the pt-BR feedback and the
# public checks share one grading of the catalog; `ptbr_kernel`: what a pt-BR notebook's checks
# show and the pt-BR terms they print read one kernel run), any other test alone. The units in
# HEAVY_FIRST are sent first, so the run does not end waiting on one of them. `shared_build`
# builds an artifact once for every worker.
# ---------------------------------------------------------------------------------------------
QUICK_LIMIT_S = 10.0
SHARED_GROUPS = {"catalog_graded": "catalog", "catalog_public": "catalog", "ptbr_buggy_run": "ptbr_kernel"}
HEAVY_FIRST = (
    "catalog",
    "tests/test_hostile.py",
    "tests/test_deployments.py",
    "tests/test_grading.py",
    "tests/test_engines.py",
    "tests/test_notebooks.py",
)
_SPENT = pytest.StashKey[float]()

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One thread each for torch in the workers and what they start (kernels, judges): the
    # workers share the machine's cores, and more threads than cores only slow every one down.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # One judge for a batch a test grades without --jobs, for the same reason: a worker's
    # share of the machine is one core, and each more judge imports torch twice (it and its
    # fork server) to wait for that core. The tests of the judges' pool say --jobs 2.
    os.environ.setdefault("KIT_JOBS", "1")


def _fixture_scope(decorator):
    """The scope of a `@pytest.fixture(scope=...)` decorator, or None for anything else."""
    if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func) in ("pytest.fixture", "fixture")):
        return None
    scope = next((k.value for k in decorator.keywords if k.arg == "scope"), None)
    return scope.value if isinstance(scope, ast.Constant) else "function"


@functools.cache
def _module_units(module):
    """(the module's own unit or None, {test name: group}) from the module's source: a module that
    defines a module- or session-scoped fixture is one unit; a test taking a SHARED_GROUPS fixture
    is in that group."""
    path = ROOT / module
    if path.suffix != ".py" or not path.is_file():
        return None, {}
    tree = ast.parse(path.read_text())
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    own = any(_fixture_scope(d) in ("module", "session") for n in defs for d in n.decorator_list)
    groups = {}
    for n in defs:
        if n.name.startswith("test"):
            shared = [SHARED_GROUPS[a.arg] for a in n.args.args if a.arg in SHARED_GROUPS]
            if shared:
                groups[n.name] = shared[0]
    return (module if own else None), groups


def _unit(nodeid):
    """The scheduling unit of a test: its SHARED_GROUPS group, its module, or itself."""
    module, _, rest = nodeid.partition("::")
    own, groups = _module_units(module)
    name = rest.split("::")[-1].split("[")[0]
    return groups.get(name) or own or nodeid


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per core. One more worker keeps the cores busy while the battery
    waits out its time limits (675-725 s for the whole command instead of 817-880 s here), but
    the battery's `memory_across_processes` then failed one run in three: its tree reached the
    memory limit and crawled (the kernel reclaiming its pages) to the call's wall clock, a
    timeout the judge did not then call a memory limit (it does now, `reached_memory_limit`);
    until that is seen to hold under load, one per core."""
    return os.cpu_count() or 1


def pytest_xdist_make_scheduler(config, log):
    """xdist's load-by-scope scheduling with this file's units (pytest-xdist's own groups,
    `--dist loadgroup`, rename node ids in a way pytest 9 no longer reads)."""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return _unit(nodeid)

    return Units(config, log)


def pytest_collection_modifyitems(config, items):
    """The heaviest units first (the same order on every worker)."""

    def rank(pair):
        index, item = pair
        unit = _unit(item.nodeid)
        unit = unit if unit in HEAVY_FIRST else item.nodeid.split("::")[0]
        return (HEAVY_FIRST.index(unit) if unit in HEAVY_FIRST else len(HEAVY_FIRST), index)

    items[:] = [item for _, item in sorted(enumerate(items), key=rank)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """An unmarked (quick-tier) test over QUICK_LIMIT_S fails, naming what to do."""
    outcome = yield
    report = outcome.get_result()
    spent = item.stash.get(_SPENT, 0.0) + report.duration
    item.stash[_SPENT] = spent
    limit = _quick_limit()
    if report.when == "teardown" and spent > limit and item.get_closest_marker("slow") is None:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} took {spent:.1f} s (setup, call and teardown), over the quick tier's "
            f"{QUICK_LIMIT_S:g} s ({limit:.0f} s with {_workers()} workers on {os.cpu_count()} cores): "
            "mark it @pytest.mark.slow, or make it quicker"
        )


def _workers():
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def _quick_limit():
    """QUICK_LIMIT_S of a core's time, in seconds of the clock: with more workers than cores
    (`-n` above the core count) a test shares its core, and takes longer by as much."""
    return QUICK_LIMIT_S * max(1.0, _workers() / (os.cpu_count() or 1))


# ---------------------------------------------------------------------------------------------
# Each assignment's share of the run, printed at its end: the seconds (setup, call and teardown)
# of the tests whose id names exactly one assignment, summed by assignment on the process that
# prints the summary (xdist sends it every report), and the catalog's grading per assignment
# (each entry's own results.json `execution_time`, summed), which its session fixture measures on
# whichever worker built it and leaves as data in the run's folder (`_SHARE_FILE`).
# ---------------------------------------------------------------------------------------------
_SHARES: dict = {}  # assignment -> seconds of the tests naming it
_SHARE_FILE = "assignment-shares-{}.json"
_NAMED = {a: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(a)}(?![A-Za-z0-9_])") for a in ASSIGNMENTS}


def assignment_of(nodeid):
    """The one assignment a test id names (a parameter, a file), or None (none, or several)."""
    found = [a for a, pattern in _NAMED.items() if pattern.search(nodeid)]
    return found[0] if len(found) == 1 else None


def pytest_runtest_logreport(report):
    name = assignment_of(report.nodeid)
    if name is not None:
        _SHARES[name] = _SHARES.get(name, 0.0) + report.duration


def _run_folder(tmp_path_factory):
    """The run's temporary folder, shared by its xdist workers and the process that prints."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def record_share(tmp_path_factory, what, seconds):
    """Leave `what`'s seconds per assignment ({assignment: s}) for the run's summary."""
    (_run_folder(tmp_path_factory) / _SHARE_FILE.format(what)).write_text(json.dumps(seconds))


def pytest_terminal_summary(terminalreporter, config):
    if os.environ.get("PYTEST_XDIST_WORKER") or not hasattr(config, "_tmp_path_factory"):
        return
    folder = _run_folder(config._tmp_path_factory)
    measured = {
        p.name[len("assignment-shares-") : -len(".json")]: json.loads(p.read_text())
        for p in sorted(folder.glob(_SHARE_FILE.format("*")))
    }
    if not _SHARES and not measured:
        return
    terminalreporter.section("each assignment's share")
    head = "tests naming it (s, setup+call+teardown)" + "".join(
        f"; {w} (s, its entries' execution_time)" for w in measured
    )
    terminalreporter.write_line(f"assignment: {head}")
    for a in ASSIGNMENTS:
        parts = [f"{_SHARES.get(a, 0.0):.2f}"] + [f"{m.get(a, 0.0):.2f}" for m in measured.values()]
        terminalreporter.write_line(f"  {a}: {'; '.join(parts)}")


def shared_build(tmp_path_factory, name, build):
    """A folder that `build(folder)` fills once for the whole run: the first worker that needs it
    builds it under a lock, the others wait for it and reuse it (without xdist: once per session)."""
    import fcntl

    base = _run_folder(tmp_path_factory)
    folder, done = base / f"shared-{name}", base / f"shared-{name}.done"
    with open(base / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            if folder.exists():
                import shutil

                shutil.rmtree(folder)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """`python -m autograder build --dist-only`'s output (the zips and the public wheel), built once."""
    return shared_build(tmp_path_factory, "dist", lambda out: run_cli("build", "--out", out, "--dist-only"))


@pytest.fixture(scope="session")
def catalog_graded(tmp_path_factory):
    """Every catalog entry filled into the course's edition (pt-BR) of its assignment and graded
    once by the judge (`grade_batch`, the real batch path, its public checks kept as `audit`
    keeps them): [(entry, its results.json data)]. The audit's verdicts, its public column
    (`catalog_public`) and the pt-BR feedback test read the same grading."""
    from autograder.audit import catalog
    from autograder.audit import run as audit_run
    from autograder.grade import grade_batch

    tmp = tmp_path_factory.mktemp("catalog")
    chosen = list(catalog.entries())
    files = audit_run.fill_catalog(chosen, tmp / "in", "pt-BR")
    # two judges: the catalog is the run's longest unit, and its two judges share the machine's
    # cores with the other worker's tests (KIT_JOBS, one, would leave it alone the longest)
    cfg = config.load(ROOT / "grading.yml")
    rows = grade_batch(files, tmp / "out", progress=False, cfg=cfg, jobs=2, keep_public=True)
    assert [str(path) for _, path, _ in rows] == [str(f) for f in files], "grade_batch keeps the input order"
    seconds = {}
    for e, (_, _, data) in zip(chosen, rows):
        seconds[e.assignment] = seconds.get(e.assignment, 0.0) + float(data.get("execution_time") or 0.0)
    record_share(tmp_path_factory, "catalog", seconds)
    return [(e, data) for e, (_, _, data) in zip(chosen, rows)]


@pytest.fixture(scope="session")
def catalog_public(tmp_path_factory, catalog_graded):
    """{(assignment, name): (kind, failing public checks)} for every catalog entry (kind "correct"
    or "buggy"), read from its grading as `audit` reads them (`audit.run.public_of`), and for each
    assignment's reference and its untouched template ("reference", "template"), filled into the
    English edition and checked once on a fresh load, as `check` runs them (`public_failures`)."""
    from autograder.audit import run as audit_run
    from autograder.audit.catalog import fill_reference
    from autograder.audit.public import public_failures

    tmp = tmp_path_factory.mktemp("public")
    found = {
        (e.assignment, e.name): ("correct" if e.correct else "buggy", audit_run.public_of(data))
        for e, data in catalog_graded
    }
    files = {}
    for a in ASSIGNMENTS:
        nb = template(a)
        for name, kind, filled in [("(reference)", "reference", fill_reference(nb, a)), ("(template)", "template", nb)]:
            path = tmp / a / f"{name.strip('()')}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(filled))
            files[(a, name)] = (kind, path)
    checked = public_failures([path for _, path in files.values()], config.load(ROOT / "grading.yml"))
    return found | {key: (kind, checked[str(path)]) for key, (kind, path) in files.items()}


def run_notebook(nb, folder, name):
    """Execute `nb` (a dict) saved as folder/name (where otter.Notebook finds it) in a Jupyter
    kernel, top to bottom; returns the executed notebook (nbformat's)."""
    import nbformat
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nbformat.from_dict(nb), path)
    run = nbformat.read(path, as_version=4)
    NotebookClient(run, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return run


@pytest.fixture(scope="session")
def ptbr_buggy_run(tmp_path_factory):
    """The pt-BR scaled_dot_product notebook with an inverted causal mask (a catalog bug whose
    public checks fail on an `assert ..., MESSAGES[...]`) and a by-hand answer typed as
    arithmetic, executed top to bottom with otter-grader installed, once for the run: (the
    notebook as filled, its folder, the executed notebook). What its checks and export show
    (tests/test_check_display.py) and the pt-BR they print (tests/test_terms.py) read it."""
    from autograder.audit.catalog import entries, fill_entry

    assignment = "scaled_dot_product"
    entry = next(e for e in entries(assignment) if e.name == "causal_mask_inverted")
    nb = fill_entry(template(assignment, "pt-BR"), entry)
    # and the by-hand answer typed as arithmetic: the build's `as_graded` case reads the saved
    # notebook through the kit's `grader` and fails it as the grade will
    cell = next(c for c in nb["cells"] if "".join(c["source"]).startswith("# kit-by-hand"))
    assert "0.0454" in "".join(cell["source"])
    cell["source"] = "".join(cell["source"]).replace("0.0454", "1/22.03")
    folder = tmp_path_factory.mktemp("otter-ptbr")
    return nb, folder, run_notebook(nb, folder, f"{assignment}.ipynb")

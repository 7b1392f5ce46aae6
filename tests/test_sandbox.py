"""The worker sandbox: student code runs in another process, limited, and cannot
reach the judge, the solutions or the hidden suites."""

import os
from pathlib import Path

import pytest
import torch

from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from autograder.messages import t
from conftest import limits

CODE = """
import os, sys, time, torch
def double(x):
    return x * 2
def whoami():
    return os.getuid()
def read_solution():
    import autograder.private.solutions.classic_attention
    return "read"
def list_suites(path):
    return os.listdir(path)
def spin(x):
    while True:
        pass
def segfault(x):
    import ctypes
    return ctypes.string_at(0)
def exit_quietly(x):
    os._exit(0)
def kill_parent(x):
    os.kill(os.getppid(), 9)
    return "killed"
def kill_everything(x):
    os.kill(-1, 9)
    return "alive"
def allocate(x):
    return torch.empty(20 * 2**30, dtype=torch.uint8).fill_(1).sum()
def shout(x):
    sys.stdout.write("x" * 100_000_000)
    return 1
def numpy_back(x):
    return x.numpy()
"""


@pytest.fixture(params=["spawned", "forked"])
def remote(request, forkserver):
    """A worker started as a new interpreter, or forked from the fork server."""
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, CODE, CODE)])
    r = Remote(
        sub,
        "",
        limits(cpu_seconds_per_call=2, load_seconds=30, memory_mb=2048, output_bytes=1_000_000),
        forkserver=forkserver if request.param == "forked" else None,
    )
    yield r
    r.close()


def test_calls_return_plain_tensors(remote):
    x = torch.arange(6.0).reshape(2, 3)
    reply = remote.call("double", [x])
    assert reply.ok and torch.equal(reply.value, x * 2)
    bad = remote.call("numpy_back", [x])
    assert bad.ok and type(bad.value).__name__ == "Other" and bad.value.type_name == "numpy.ndarray"


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop and hidden paths need a root judge")
def test_worker_is_unprivileged_and_cannot_read_solutions_or_suites(remote):
    import autograder

    assert remote.call("whoami").value != 0
    reply = remote.call("read_solution")
    assert not reply.ok and "No module named" in reply.error, reply.error
    for suites in ("suites", "assignments"):
        listing = remote.call("list_suites", [str(Path(autograder.__file__).parent / "private" / suites)])
        assert not listing.ok or listing.value == [], listing


@pytest.mark.skipif(os.geteuid() != 0, reason="a root judge drops the worker to another uid")
def test_killing_the_parent_or_everything_fails_only_that_call(remote):
    assert not remote.call("kill_parent", [1]).ok
    # kill(-1) as the worker's uid reaches no process of the judge's (and spares the caller)
    remote.call("kill_everything", [1])
    assert remote.call("double", [torch.ones(1)]).ok


@pytest.mark.parametrize(
    "target,reason",
    [
        ("spin", "CPU time limit"),
        ("segfault", "signal 11"),
        ("exit_quietly", "exited early"),
        ("shout", "output limit"),
    ],
)
def test_a_dying_function_fails_alone_and_fails_fast_afterwards(remote, target, reason):
    first = remote.call(target, [1])
    assert not first.ok and reason in first.error, first.error
    again = remote.call(target, [1])
    assert not again.ok and again.error == first.error
    assert remote.call("double", [torch.ones(2)]).ok  # a fresh worker serves the rest


def test_memory_limit_is_an_error_not_a_crash(remote):
    reply = remote.call("allocate", [1])
    assert not reply.ok and ("memory" in reply.error.lower() or "alloc" in reply.error.lower()), reply.error
    assert remote.call("double", [torch.ones(2)]).ok


@pytest.mark.slow
def test_a_cell_that_never_finishes_is_skipped_and_the_rest_still_runs():
    loop = "while True:\n    pass\n"
    ok = "def double(x):\n    return x * 2\n"
    sub = Submission(Path("loop.ipynb"), {}, [Cell(2, ok, ok), Cell(3, loop, loop)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=2, load_seconds=3))
    try:
        assert r.call("double", [torch.ones(2)]).ok
        skipped = t("cell_skipped", cell=t("cell_numbered", index=3), why="")
        assert any(e.startswith(skipped + "exceeded the CPU time limit") for e in r.cell_errors), r.cell_errors
    finally:
        r.close()


@pytest.mark.slow
def test_a_notebook_that_never_finishes_loading_fails_every_call_with_the_reason():
    src = "while True:\n    pass\n"
    sub = Submission(Path("loop.ipynb"), {}, [Cell(3, src, src), Cell(4, src, src), Cell(5, src, src)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=2, load_seconds=3))
    try:
        reply = r.call("anything")
        assert not reply.ok and "running the notebook's cells" in reply.error and "CPU" in reply.error
        assert r.call("other").error == reply.error
    finally:
        r.close()


def test_fallback_without_a_mount_namespace_hides_by_mode(tmp_path):
    from autograder.sandbox.confine import restrict_by_mode
    from autograder.sandbox.view import View

    hidden = tmp_path / "solutions"
    hidden.mkdir(mode=0o755)
    blocked = tmp_path / "home"
    (blocked / "python").mkdir(parents=True)
    blocked.chmod(0o700)
    restrict_by_mode(View(fallback_hide=[str(hidden)], reach=[str(blocked / "python")]))
    assert hidden.stat().st_mode & 0o777 == 0o700
    assert blocked.stat().st_mode & 0o777 == 0o701


@pytest.mark.skipif(os.geteuid() != 0, reason="worker uids are allocated by a root judge")
def test_concurrent_judges_never_share_a_worker_uid():
    import subprocess
    import sys

    from autograder.sandbox.uids import worker_uid

    mine = worker_uid()
    other = subprocess.run(
        [sys.executable, "-c", "from autograder.sandbox.uids import worker_uid; print(worker_uid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert mine != int(other) and mine == worker_uid()


def test_an_interpreter_started_by_a_relative_path_from_outside_the_view_still_runs_workers(tmp_path):
    """`../venv/bin/python -m autograder check ...` from a folder the worker cannot see."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    here = tmp_path / "work"
    here.mkdir()
    python = os.path.relpath(sys.executable, here)  # through folders outside the worker's view
    assert ".." in python
    notebook = ROOT / "examples/submissions/scaled_dot_product/reference.ipynb"
    proc = subprocess.run(
        [python, "-m", "autograder", "check", str(notebook)],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.parametrize(
    "used, limit",
    [(0.1, False), (1.0, False), (8.0, True), (10.2, True)],  # of a 10 s call; 8.0: /proc lagging a killed worker
)
def test_a_sigxcpu_near_the_calls_budget_is_worded_as_the_limit(used, limit):
    from autograder.sandbox.client import WorkerClient

    client = WorkerClient(limits())
    client._cpu_budget, client._cpu_start = 10.0, 100.0
    assert client._cpu_limit_reached(100.0 + used) is limit


ROUTES = r"""
import builtins, importlib, importlib.util, pickle, runpy, sys
import torch

def _asked(route):
    try:
        route()
    except ImportError as exc:  # runpy words it as its own ImportError, naming the refusal
        return "refused" if "No module named 'yaml'" in str(exc) else f"refused: {exc}"
    return "imported"

class _Hook(torch.nn.Module):
    def forward(self, x):
        import yaml  # the notebook's code, called back by torch
        return x

ROUTES = {
    "statement": lambda: exec("import yaml", globals()),
    "__import__": lambda: __import__("yaml"),
    "__import__ with other globals": lambda: __import__("yaml", {}),
    "builtins.__import__": lambda: builtins.__import__("yaml", None, None, (), 0),
    "importlib.import_module": lambda: importlib.import_module("yaml"),
    "exec of a string, fresh globals": lambda: exec("import yaml", {}),
    "find_spec": lambda: importlib.util.module_from_spec(importlib.util.find_spec("yaml")),
    "runpy": lambda: runpy.run_module("yaml"),
    "pickle's find_class": lambda: pickle.loads(b"cyaml\nsafe_load\n."),
    "a function torch calls back": lambda: _Hook()(torch.ones(1)),
}

def routes():
    return {name: _asked(route) for name, route in ROUTES.items()}

def library_imports():
    import torch.fx.experimental.symbolic_shapes  # torch's own code imports sympy, a package the notebook may not
    import matplotlib.pyplot as plt
    return "sympy" in sys.modules
"""


def test_a_package_the_grader_holds_is_refused_by_every_route_and_a_librarys_own_imports_pass(forkserver):
    """The worker's import guard decides whose import it is by the code asking (the nearest frame
    past the import machinery and the standard library), not by the namespace an import names:
    every way the notebook's code asks for PyYAML (a kit dependency, installed wherever the kit
    runs) is refused as `import yaml` is, while torch's own imports of its dependencies pass."""
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, ROUTES, ROUTES)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=20, load_seconds=30), forkserver=forkserver)
    try:
        found = r.call("routes")
        assert found.ok, (found.error, r.cell_errors)
        assert set(found.value.values()) == {"refused"}, found.value
        lib = r.call("library_imports")
        assert lib.ok and lib.value is True, lib.error
    finally:
        r.close()


def test_a_fork_server_warmed_for_training_hands_its_workers_what_an_optimizer_step_imports():
    """`ForkServer.warm_training` (asked by the judge for an assignment that trains) loads
    torch._dynamo, which an optimizer's first step imports, in the server: workers forked
    after it hold it without paying the import; workers of a server never asked do not."""
    from autograder.sandbox.forkserver import ForkServer

    code = "import sys\ndef holds(name):\n    return name in sys.modules\n"
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    server = ForkServer()
    try:
        for warmed in (False, True):
            if warmed:
                server.warm_training()
            r = Remote(sub, "", limits(cpu_seconds_per_call=5, load_seconds=30), forkserver=server)
            try:
                reply = r.call("holds", ["torch._dynamo"])
                assert reply.ok and reply.value is warmed, (warmed, reply.error, reply.value)
            finally:
                r.close()
    finally:
        server.close()


def test_public_checks_run_after_graded_calls_see_the_random_state_the_cells_left(forkserver):
    """The judge runs a notebook's public checks after its last verdict call, in the same worker
    (the audit reads them so): they start from the random generators' states the cells left,
    as on a fresh load (`check`), whatever the graded calls drew before."""
    code = "import random, torch\nrandom.seed(3)\ntorch.manual_seed(3)\ndef draw():\n    return random.random() + float(torch.rand(()))\n"
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=5, load_seconds=30), forkserver=forkserver)
    try:
        first, second = r.call("draw"), r.call("draw")
        assert first.ok and second.ok and first.value != second.value  # the graded calls moved the state
        source = (
            "from otter.test_files import test_case\n"
            f"@test_case()\ndef test_fresh(draw):\n    assert draw() == {first.value!r}\n"
        )
        results = r.public([{"name": "q", "source": source}])
        assert [c["ok"] for c in results[0]["cases"]] == [True], results
    finally:
        r.close()


def test_random_generators_replaced_by_the_notebook_end_no_load_and_no_public_run(forkserver):
    """The worker reads and restores the generators' states with the functions it took before
    any student code ran: a cell that replaces the getters (at load) and a graded call that
    replaces the setters (before the public checks), numpy's included, end neither the load
    nor the public run, and the states still come back as the cells left them."""
    code = (
        "import random, numpy, torch\n"
        "random.seed(5)\n"
        "torch.manual_seed(5)\n"
        "random.getstate = torch.get_rng_state = numpy.random.get_state = None\n"
        "def draw():\n"
        "    return random.random() + float(torch.rand(()))\n"
        "def breaker():\n"
        "    random.setstate = torch.set_rng_state = numpy.random.set_state = None\n"
        "    return 1\n"
    )
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=5, load_seconds=30), forkserver=forkserver)
    try:
        first = r.call("draw")
        assert first.ok and not r.cell_errors, (first.error, r.cell_errors)
        assert r.call("breaker").ok and r.call("draw").value != first.value
        source = (
            "from otter.test_files import test_case\n"
            f"@test_case()\ndef test_fresh(draw):\n    assert draw() == {first.value!r}\n"
        )
        results = r.public([{"name": "q", "source": source}])
        assert [c["ok"] for c in results[0]["cases"]] == [True], results
    finally:
        r.close()

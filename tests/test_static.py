"""Static checks, run by the test command: ruff (lint and format) over the package, bench/
and tests/, and mypy over the typed packages (protocol, sandbox, judge), each with the
settings in pyproject.toml and the venv's own pinned executables.

A tool that is missing skips its test, saying how to install it; under CI=true it fails.
The last tests show that each check can fail: a file with the faults it must catch."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LINTED = ("autograder", "bench", "tests")
TAIL = 6000  # characters of a failing tool's output shown


def _require(module):
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed in this interpreter (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _run(module, *args, timeout=300):
    _require(module)
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    return proc.returncode, (proc.stdout + proc.stderr)[-TAIL:]


def _clean(module, *args):
    rc, out = _run(module, *args)
    assert rc == 0, f"`{' '.join((module, *args))}` exited with {rc}:\n{out}"


def test_ruff_check():
    _clean("ruff", "check", *LINTED)


def test_ruff_format():
    _clean("ruff", "format", "--check", *LINTED)


@pytest.mark.slow  # cold (a fresh clone: no .mypy_cache), mypy reads torch's stubs: 20-30 s here; warm, about 1 s
def test_mypy():
    _clean("mypy")  # the files, settings and cache (.mypy_cache) of pyproject.toml


# -- the checks can fail -----------------------------------------------------------
def test_ruff_check_fails_on_faults(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    return undefined_name\n")
    rc, out = _run("ruff", "check", "--no-cache", "--config", str(PYPROJECT), str(bad))
    assert rc == 1, out
    assert "F401" in out and "F821" in out, out  # the unused import, the undefined name


def test_ruff_format_fails_on_unformatted(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = {  'a':1 }\n")
    rc, out = _run("ruff", "format", "--check", "--no-cache", "--config", str(PYPROJECT), str(bad))
    assert rc == 1, out


def test_mypy_fails_on_unannotated(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    return x\n\n\ndef g(n: int) -> str:\n    return n\n")
    rc, out = _run("mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(tmp_path / "cache"), str(bad))
    assert rc == 1, out
    assert "[no-untyped-def]" in out, out  # the project's disallow_untyped_defs
    assert "[return-value]" in out, out

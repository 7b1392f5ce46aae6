"""Shared helpers for the kit's own tests."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import config
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


def run_cli(*args, check=True, timeout=900, env=None):
    """Run `python -m autograder ARGS` as a user would; return the CompletedProcess."""
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", *map(str, args)],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"autograder {' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def scores(results_json):
    data = json.loads(Path(results_json).read_text())
    return {t["name"]: (t["score"], t["max_score"]) for t in data["tests"]}


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
    return {"cells": list(cells), "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def code_cell(source, tags=None):
    """A code cell (a dict) with `source` and, optionally, these tags."""
    return {"cell_type": "code", "source": source, "metadata": {"tags": tags} if tags else {}, "outputs": [],
            "execution_count": None}


@pytest.fixture(scope="module")
def forkserver():
    """A fork server of the judge's own, shared by a test module's workers."""
    from autograder.sandbox.forkserver import ForkServer

    fs = ForkServer()
    yield fs
    fs.close()


def suite_skeleton(tmp_path, assignment, monkeypatch):
    """A hidden-suites folder of the judge's shape (its conftest, pytest.ini and package
    files) holding one empty assignment folder, put in place of the kit's for this test:
    a test writes the suite files it needs into the returned folder."""
    import autograder.judge as judge
    from autograder import layout

    suite = tmp_path / "suites"
    (suite / assignment).mkdir(parents=True)
    for f in ("conftest.py", "pytest.ini", "__init__.py"):
        (suite / f).write_text((layout.SUITES / f).read_text())
    monkeypatch.setattr(judge, "SUITES", suite)
    return suite / assignment

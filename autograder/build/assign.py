"""Run otter assign on a master notebook and make its student notebook the kit's.

`run_otter_assign(master, workdir)` -> `AssignOutput` (paths of otter's student
notebook, autograder zip and tests). `student_notebook(path, assignment)` ->
the normalised student notebook (a NotebookNode): deterministic cell ids, no
outputs, `metadata.kit_assignment`. `check_no_leaks(nb, assignment)` raises
when the student notebook holds reference code outside the provided cell.
"""

import contextlib
import copy
import io
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import layout
from autograder.build import as_graded, sync, texts


class AssignError(Exception):
    """otter assign failed or produced something unexpected."""


@dataclass
class AssignOutput:
    workdir: Path
    student: Path  # otter's student notebook
    autograder_zip: Path  # otter's generated autograder zip
    log: str


def run_otter_assign(master, workdir, in_process=False):
    """otter assign `master` into `workdir` (a fresh folder): no PDFs, no test run.

    The master notebook is first copied into `workdir/master/` so that otter's
    outputs never land beside the committed notebook. By default otter runs in
    a subprocess (`python -m otter assign`), which keeps its logging and
    global state out of this process."""
    master = Path(master).resolve()
    workdir = Path(workdir).resolve()
    src = workdir / "master"
    src.mkdir(parents=True)
    shutil.copy2(master, src / master.name)
    result = workdir / "result"
    if in_process:
        from otter.assign import main as assign_main

        buf = io.StringIO()
        handler = logging.StreamHandler(buf)
        otter_logger = logging.getLogger("otter")
        otter_logger.addHandler(handler)
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                assign_main(str(src / master.name), str(result), no_pdfs=True, no_run_tests=True)
        except Exception as exc:  # otter raises many kinds
            raise AssignError(
                f"otter assign failed on {master.name}: {type(exc).__name__}: {exc}\n{buf.getvalue()[-3000:]}"
            ) from exc
        finally:
            otter_logger.removeHandler(handler)
        log = buf.getvalue()
    else:
        cmd = [
            sys.executable,
            "-m",
            "otter",
            "assign",
            "--no-pdfs",
            "--no-run-tests",
            str(src / master.name),
            str(result),
        ]
        env = dict(os.environ, PYTHONHASHSEED="0")
        proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True, env=env)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise AssignError(f"otter assign failed on {master.name} (exit {proc.returncode}):\n{log[-3000:]}")
    student = result / "student" / master.name
    zips = sorted((result / "autograder").glob("*-autograder_*.zip"))
    if not student.exists():
        raise AssignError(f"otter assign wrote no student notebook for {master.name}:\n{log[-3000:]}")
    if len(zips) != 1:
        raise AssignError(f"otter assign wrote {len(zips)} autograder zips for {master.name}:\n{log[-3000:]}")
    return AssignOutput(workdir, student, zips[0], log)


# The student notebook's first cell, in place of otter's three lines. One
# top-level `try` (the judge's reader strips it whole: the grader runs none of
# it). `grader` is the kit's own check display over otter's tests: otter frames
# each failure in English ("Test case failed", "Error at line 42", the assertion's
# source) and no setting of otter's quiets that, so `check` runs each test case of
# the question (otter's own reading of the notebook's tests where otter runs) and
# shows the kit's message alone, in the edition's language. Where otter cannot
# run the checks (a renamed or copied notebook, Colab, no otter-grader
# installed) it finds this notebook's public tests (Colab's copy of the
# notebook, or the newest .ipynb beside it whose metadata names the assignment)
# and runs them itself, as otter would: the self-check only; the hidden tests are
# run by the grader, never by this cell.
INIT_CELL = '''@init_comment@
try:
    class _KitCheck:
        """@init_check_doc@"""

        def __init__(self, question, cases):
            self.question, self.cases = question, cases

        @property
        def passed_all(self):
            return all(exc is None for _, exc in self.cases)

        def __repr__(self):
            question, n = self.question, len(self.cases)
            failed = [f"{name}: {exc}" if isinstance(exc, AssertionError) and str(exc) else
                      f"{name}: {type(exc).__name__}: {exc}" for name, exc in self.cases if exc is not None]
            k = len(failed)
            return f"@init_passed@" if not failed else f"@init_failed@\\n    " + "\\n    ".join(failed)

    class _KitChecks:
        """@init_checks_doc@"""

        def __init__(self, notebook, tests=None):
            self.otter, self._notebook = notebook, getattr(notebook, "_notebook", None)
            self.tests = notebook._nbmeta_config.tests if notebook is not None else tests

        def _cases(self, question):
            if self.otter is not None:
                import otter.test_files
                test = otter.test_files.create_test_file(self._notebook, self.otter._nbmeta_config, test_name=question)
                return [(case.body.test_func.__name__, case.body.call_func) for case in test.test_cases]
            import inspect
            found = []
            source = self.tests[question].replace("from otter.test_files import test_case", "")
            exec(source, {"test_case": lambda *a, **k: lambda fn: found.append(fn) or fn})
            return [(fn.__name__, lambda env, fn=fn: fn(*[env if p == "env" else env.get(p)
                     for p in inspect.signature(fn).parameters])) for fn in found]

        def check(self, question, global_env=None):
            env = globals() if global_env is None else global_env
            if question not in self.tests:
                return print(f"@init_no_checks@")
            cases = []
            for name, run in self._cases(question):
                try:
                    run(env)
                    cases.append((name, None))
                except Exception as exc:
                    cases.append((name, exc))
            return _KitCheck(question, cases)

        def check_all(self):
            for question in self.tests:
                print(repr(self.check(question)))

        def export(self, *args, **kwargs):
            if self.otter is None:
                return print("@init_export@")
            import datetime, html, os
            from IPython.display import HTML, display
            stamp = datetime.datetime.now().strftime("_%Y_%m_%dT%H_%M_%S_%f.zip")
            path = kwargs.pop("export_path", None) or os.path.splitext(self._notebook)[0] + stamp
            self.otter.export(*args, export_path=path, display_link=False, **kwargs)
            link = html.escape(path, quote=True)
            display(HTML(f"<p>@init_exported@ <a href='{link}' download='{link}' target='_blank'>{link}</a></p>"))

    import otter
    grader = _KitChecks(otter.Notebook("ASSIGNMENT.ipynb"))
except Exception:
    def _kit_find_notebook(assignment):
        """@init_find_doc@"""
        import glob, json, os
        readers = []
        try:
            from google.colab import _message
            readers.append((None, lambda: _message.blocking_request("get_ipynb", timeout_sec=30)["ipynb"]))
        except Exception:
            pass
        for path in sorted(glob.glob("*.ipynb"), key=os.path.getmtime, reverse=True):
            readers.append((path, lambda path=path: json.load(open(path, encoding="utf-8"))))
        for path, read in readers:
            try:
                nb = read()
                meta = nb["metadata"]
                if assignment in (meta.get("kit_assignment"), meta.get("otter", {}).get("assignment_name")):
                    return path, nb
            except Exception:
                pass
        return None, {}

    _kit_path, _kit_nb = _kit_find_notebook("ASSIGNMENT")
    try:
        if not _kit_path:
            raise FileNotFoundError("@init_needs_file@")
        grader = _KitChecks(otter.Notebook(_kit_path))
    except Exception:
        grader = _KitChecks(None, _kit_nb.get("metadata", {}).get("otter", {}).get("tests", {}))
'''


# The init cell's metadata: collapsed in Jupyter (and VS Code), a form in Colab.
INIT_CELL_METADATA = {"jupyter": {"source_hidden": True}, "cellView": "form"}

INIT_TEXTS = (
    "init_comment",
    "init_find_doc",
    "init_check_doc",
    "init_checks_doc",
    "init_no_checks",
    "init_passed",
    "init_failed",
    "init_export",
    "init_exported",
    "init_needs_file",
)
# the fields of the init cell's texts, as the cell's f-strings compute them
INIT_FIELDS = {"question": "{question}", "n": "{n}", "k": "{k}"}


def init_cell_source(assignment, lang="en"):
    source = INIT_CELL.replace("ASSIGNMENT", assignment)
    for key in INIT_TEXTS:
        text = texts.get(key, lang)
        if key != "init_comment" and ('"' in text or "\\" in text or "\n" in text):
            raise AssignError(f"texts.yml: {key} ({lang}) may not hold a double quote, a backslash or a line break")
        source = source.replace(f"@{key}@", text.format(**INIT_FIELDS) if "{" in text else text)
    return source


# The cells otter writes itself (check_all and export), in the edition's language:
# (texts.yml key, how the English cell starts).
OTTER_CELLS = ("otter_check_all", "otter_submission", "otter_export_comment")


def localize_otter_cells(nb, lang):
    """Replace otter's own English in the check_all and export cells by `lang`'s (in place)."""
    if lang == "en":
        return
    found = set()
    for cell in nb.cells:
        src = "".join(cell["source"]) if isinstance(cell.get("source"), list) else cell.get("source", "")
        for key in OTTER_CELLS:
            english = texts.get(key, "en")
            if src.startswith(english):
                cell["source"] = texts.get(key, lang) + src[len(english) :]
                found.add(key)
                break
    missing = [k for k in OTTER_CELLS if k not in found]
    if missing:
        raise AssignError(
            f"otter's student notebook has no cell starting with the texts.yml English of "
            f"{', '.join(missing)} (has otter's text changed? update texts.yml)"
        )


# Cell metadata otter or Jupyter add that changes from run to run, or that
# students do not need.
_VOLATILE_CELL_META = ("execution", "collapsed", "scrolled", "ExecuteTime")


def student_notebook(path, assignment, lang="en"):
    """otter's student notebook, normalised so that rebuilding gives identical bytes, in
    edition `lang` (its init cell and otter's own cells in that language, and
    `metadata.kit_language`, which the judge reads to choose the feedback's language)."""
    nb = nbformat.read(str(path), as_version=4)
    nb = copy.deepcopy(nb)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{assignment.replace('_', '-')}-{i:03d}"
        if i == 0 and cell.get("cell_type") == "code" and "otter.Notebook(" in "".join(cell.get("source", "")):
            cell["source"] = init_cell_source(assignment, lang)
            # collapsed: Jupyter hides the code, Colab shows the #@title line as a form
            cell.setdefault("metadata", {}).update(INIT_CELL_METADATA)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
        for key in _VOLATILE_CELL_META:
            cell.get("metadata", {}).pop(key, None)
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    localize_otter_cells(nb, lang)
    as_graded.add(nb, lang)  # each public check fails where the grade will, for how the notebook is written
    nb.metadata["kit_assignment"] = assignment
    nb.metadata["kit_language"] = lang
    nbformat.validate(nb)
    return nb


def _reference_lines(assignment):
    """Distinctive lines of the graded reference bodies (stripped, comments dropped)."""
    from autograder import config as config_mod

    want = sync.expected_cells(assignment, config_mod.load().questions(assignment))
    lines = set()
    for src in want["solutions"].values():
        inside = False
        for line in src.split("\n"):
            s = line.strip()
            if s == "# BEGIN SOLUTION NO PROMPT":
                inside = True
                continue
            if s == "# END SOLUTION":
                inside = False
                continue
            if inside:
                code = s.split("  #")[0].strip()
                if len(code) >= 12 and not code.startswith("#"):
                    lines.add(code)
    return lines


def _hidden_suite_lines(assignment):
    """The distinctive lines of the assignment's hidden suites (its audit's files aside: a
    battery case may hold a stub's own lines, which the notebook shows anyway)."""
    folder = layout.suite(assignment)
    lines = set()
    for f in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        if layout.audit_only(f.relative_to(folder)):
            continue
        for line in f.read_text().split("\n"):
            s = line.strip()
            if len(s) >= 40 and not s.startswith(("#", "import ", "from ", '"""')):
                lines.add(s)
    return lines


def check_no_leaks(nb, assignment):
    """Raise AssignError when a student notebook holds graded reference code or
    hidden-suite code (provided cells are allowed to hold reference code)."""
    ref = _reference_lines(assignment)
    hidden = _hidden_suite_lines(assignment)
    leaks = []
    for i, cell in enumerate(nb.cells, start=1):
        tags = (cell.get("metadata") or {}).get("tags") or []
        text = cell.get("source", "")
        if sync.PROVIDED_TAG in tags:
            continue
        for line in text.split("\n"):
            s = line.strip()
            code = s.split("  #")[0].strip()
            if code in ref:
                leaks.append(f"cell {i}: reference code {code!r}")
            if s in hidden:
                leaks.append(f"cell {i}: hidden-suite code {s!r}")
    meta_text = nbformat.writes(nbformat.from_dict({**nb, "cells": []}))
    for line in sorted(ref):
        if line in meta_text:
            leaks.append(f"metadata: reference code {line!r}")
    if leaks:
        raise AssignError(f"{assignment}: the student notebook leaks:\n  " + "\n  ".join(leaks[:20]))

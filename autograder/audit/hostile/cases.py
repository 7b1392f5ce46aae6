"""The hostile battery: broken and malicious submissions, each with what the grader must do.

Each case is built from `examples/submissions/<assignment>/reference.ipynb` (a
correct notebook) by replacing or appending cells, or is a raw file. The cases
live in the folder of the assignment they grade (its battery*.py, found through
`autograder.declarations.battery_modules`); this module holds what they share. Its
expectation:

    max_score            the total may not exceed this
    questions_keep_full  these questions keep their full points
    questions_zero       these questions score 0
    not_above            name of a control case: no question may score more than
                         it does there (the honest part of the submission)
    reason_contains      one of these strings appears in results.json's messages
    must_not_contain     strings that must not appear anywhere in results.json
    leak_files           kit files (relative to the package, autograder/) whose distinctive
                         lines must not appear in results.json
    gap                  a known hole: shown in the table, never fails the run
    root_only            why the case needs a root judge (uid drop, hidden paths):
                         under a non-root judge it is listed as skipped, not run
                         (docs/pages/architecture: a non-root worker can read solutions/ and
                         signal the judge, so these would harm the run itself)

Every case must also: write results.json, and not echo the judge's secret
environment marker (`SECRET_ENV`).
"""

import io
import json
import zipfile
from dataclasses import dataclass, field

from autograder import declarations, layout  # noqa: E402
from autograder.audit.examples import EXAMPLES  # noqa: E402

PACKAGE = layout.PACKAGE
SECRET_ENV = ("KIT_HOSTILE_SECRET", "judge-only-7f3a9c1e")
ROOT_WHY = "needs a root judge: otherwise the worker runs as the judge's own user"


# The assignment whose case is being built: what `reference()` reads when a case names none.
BUILDING = {"assignment": None}


@dataclass
class Case:
    name: str
    assignment: str
    what: str
    make: object  # () -> (suffix, bytes)
    expect: dict = field(default_factory=dict)

    def build(self):
        """(suffix, bytes): the case's file, the notebook helpers' assignment its own."""
        BUILDING["assignment"] = self.assignment
        try:
            return self.make()
        finally:
            BUILDING["assignment"] = None


CASES = []


def case(name, what, assignment=None, **expect):
    """Register a case graded as `assignment`: by default the one whose folder holds the
    module that registers it (its battery*.py); a shared module names its own."""

    def register(fn):
        CASES.append(Case(name, assignment or _home(name, fn), what, fn, expect))
        return fn

    return register


def _home(name, fn):
    """The assignment whose folder holds `fn`'s module (declarations.PACKAGE.<name>.battery*)."""
    prefix = declarations.PACKAGE + "."
    if not fn.__module__.startswith(prefix):
        raise ValueError(f"the battery case {name} lives in no assignment's folder: name its assignment")
    return fn.__module__.removeprefix(prefix).split(".")[0]


# -- notebook helpers ------------------------------------------------------------
def reference(assignment=None, demo=True):
    """The reference notebook of `assignment` (default: that of the case being built);
    demo=False drops its plotting cell (which calls the graded functions while the
    notebook loads), so a case's behaviour happens in the graded call rather than at
    load time. From `examples/` where the kit is a checkout; built from `solutions/`
    (`synthesized`) in an installed copy, which ships no examples."""
    assignment = assignment or BUILDING["assignment"]
    if assignment is None:
        raise ValueError("reference(): no assignment named and no case being built")
    path = EXAMPLES / assignment / "reference.ipynb"
    nb = json.loads(path.read_text()) if path.exists() else synthesized(assignment)
    if not demo:
        nb["cells"] = [c for c in nb["cells"] if "demo_x" not in _src(c)]
    return nb


def synthesized(assignment):
    """A correct notebook built from `solutions/<assignment>.py` alone: otter's
    init cell, the imports, one cell per graded function or class (as a
    student's notebook has them), each followed by its `grader.check` cell, and
    the by-hand cell with the reference's numbers where the assignment has one."""
    import ast
    import importlib
    import inspect
    import re

    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    source = inspect.getsource(module)
    lines = source.splitlines(keepends=True)
    provided = set(getattr(module, "PROVIDED", ()))
    cells = [
        code_cell(f'import otter\ngrader = otter.Notebook("{assignment}.ipynb")\n'),
        code_cell("import math\n\nimport torch\nfrom torch import nn\nimport torch.nn.functional as F\n"),
    ]
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in provided:
            cells.append(code_cell("".join(lines[node.lineno - 1 : node.end_lineno])))
            question = re.sub(r"(?<!^)(?=[A-Z])", "_", node.name).lower()
            cells.append(code_cell(f'grader.check("{question}")\n'))
    from autograder.audit.catalog import reference_typed
    from autograder.judge import by_hand

    forms = {f.question: f for f in by_hand.forms(declarations.typed_forms())}
    for question, answers in reference_typed(assignment).items():  # each typed question: its marked cell
        cells.append(code_cell(f"{forms[question].mark}\n{answers}\n"))
        cells.append(code_cell(f'grader.check("{question}")\n'))
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def code_cell(source):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def replace_function(nb, name, source):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and f"def {name}(" in _src(cell):
            cell["source"] = source
            return nb
    raise KeyError(name)


def drop_function(nb, name):
    nb["cells"] = [c for c in nb["cells"] if not (c["cell_type"] == "code" and f"def {name}(" in _src(c))]
    return nb


def append(nb, source):
    nb["cells"].append(code_cell(source))
    return nb


def ipynb(nb):
    return ".ipynb", json.dumps(nb).encode()


def state_dict_override(assignment, cls, body):
    """The assignment's reference notebook with `cls` redefined as a subclass of the student's
    own whose state_dict (what a training run's run_train_steps sends back) is `body` (with
    `own`, the real state dict): the two labs' run cases."""
    return ipynb(
        append(
            reference(assignment),
            f"class {cls}({cls}):\n"
            "    def state_dict(self, *args, **kwargs):\n"
            "        import torch\n"
            "        own = super().state_dict(*args, **kwargs)\n"
            f"        {body}\n",
        )
    )


def others_of(questions, *lost):
    return [q for q in questions if q not in lost]


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return ".zip", buf.getvalue()


def _catalog_source(assignment, entry):
    """A catalog entry's code (its header and imports dropped), to append as a notebook cell."""
    text = (layout.catalog(assignment) / f"{entry}.py").read_text()
    body = text.split('"""', 2)[2]
    return "\n".join(line for line in body.splitlines() if not line.startswith(("import ", "from ")))


# Filled in by the battery before the cases are built: a TCP port on which the
# judge's side listens (no case may reach it) and an autograder-like zip in the
# battery's own temporary folder (no case may read it).
BATTERY = {"port": 9, "zip": "/nonexistent/autograder.zip"}

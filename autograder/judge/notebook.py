"""Read a submission (a notebook or an otter export zip) into code cells the worker runs.

The judge never parses the file itself: `autograder.judge.reader` does, in a
helper process with limits of its own (memory, CPU time, wall clock), and
sends back plain data that is checked for shape here. It reads files and
parses JSON and source, never runs the student's code, and never unpickles
anything (otter's `.OTTER_LOG` inside an export zip is ignored).

What the worker gets: the notebook's code cells in order, with IPython magics
and shell lines blanked, otter's own statements (`import otter`,
`grader = otter.Notebook(...)`, `grader.check(...)`, `grader.export(...)`)
removed, and provided cells dropped; the reference copies of provided
functions are run before and after the cells instead (see `worker.load`).
What the suites get besides: the source checks' findings (`findings`), made
by the reader on the same cells, and the by-hand answer cell's numbers
(`by_hand`) and the other typed answers (`typed`: the shapes drill), read by
the reader without running the cells.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder import config as config_mod
from autograder.judge.reader import (  # noqa: F401
    PROVIDED_MARK,
    PROVIDED_TAG,
    SubmissionError,
    cell_text,
    detect_assignment,
    is_provided,
    read_file,
    strip_magics,
    strip_otter,
)


@dataclass
class Cell:
    index: int  # position among the notebook's cells, from 1 as Jupyter shows them
    source: str  # what the worker runs
    original: str  # what the student wrote (line ends normalised, invalid characters replaced)
    unparsed: str | None = None  # why the reader could not parse it (the cell is still run: it fails on its own)
    label: str | None = None  # how Jupyter shows it: "In [7]", or "code cell 3" when it was never run


@dataclass
class Submission:
    path: Path
    notebook: dict[str, Any]  # {"metadata": the assignment's name, otter's public tests; "cells": the code cells}
    cells: list[Cell] = field(default_factory=list)
    assignment: str | None = None
    # The source checks, made by the reader (None: they did not run, and the checks that need them fail):
    # {"forbidden": {name: [findings]}, "excused": {finding: provided name}, "tracing": [findings],
    #  "unchecked": [findings against every function]} (see `sourcecheck.findings`).
    findings: dict[str, Any] | None = None
    provided: list[str] = field(default_factory=list)  # names the notebook's provided cells define
    defined: list[str] | None = None  # names its graded cells define at top level (def, class, assignment)
    # The by-hand answer cell's numbers, read without running it (`judge.by_hand`): None when the
    # notebook has no such cell, else {"cells": [index], "labels": [label], "answers": {"scores",
    # "weights", "output": floats, lists of them, or None} or None, "problem": {"key", "fields"} or None}.
    by_hand: dict[str, Any] | None = None
    # The other typed-answer cells (the word forms `declarations.typed_forms` gives), read the
    # same way: {question: the same shape as `by_hand`, answers words}, only the questions answered.
    typed: dict[str, Any] = field(default_factory=dict)
    # How the notebook is written, as the grader runs it (`judge.form.findings`): [{"key",
    # "fields", "cell", "names"}], what loses a question for its form (a package the grader lacks).
    form: list[dict[str, Any]] = field(default_factory=list)

    @property
    def source(self) -> str:
        """All graded code, for the trusted source checks."""
        return "\n\n".join(c.source for c in self.cells)


def _limits(cfg: config_mod.Config | None) -> dict[str, Any]:
    return (cfg or config_mod.load()).limits


def read_notebook_json(path: str | Path, cfg: config_mod.Config | None = None) -> dict[str, Any]:
    """The notebook from a .ipynb file or an otter export zip, as far as the kit
    reads it: {"metadata": {...}, "cells": [its code cells]} (see `Submission.notebook`)."""
    return read_file(path, (), True, _limits(cfg))["notebook"]


def load_submission(
    path: str | Path,
    known_assignments: Iterable[str],
    keep_provided: bool = False,
    cfg: config_mod.Config | None = None,
) -> Submission:
    """The submission's cells as the worker runs them (provided cells dropped unless kept)."""
    known = list(known_assignments)
    data = read_file(path, known, keep_provided, _limits(cfg))
    cells = [Cell(c["index"], c["source"], c["original"], c["unparsed"], c.get("label")) for c in data["cells"]]
    return Submission(
        Path(path),
        data["notebook"],
        cells,
        data["assignment"],
        data["findings"],
        data["provided"],
        data["defined"],
        data.get("by_hand"),
        data.get("typed") or {},
        data.get("form") or [],
    )

"""What an assignment declares about itself, read from its own folder.

Each assignment's folder under the private root (`layout.ASSIGNMENTS/<name>/`) is a
package whose `__init__.py` may declare:

    RUN   its training run in the grader (a `Run`), when it has a `training_run`
          question: the schema its settings (grading.yml `assignments.<name>.run`)
          are checked against, the top-level section older course files held them
          in, and the text of its `kit-grading-run` cell.
    COSTS the schema (an `autograder.schema.Section`) of the settings of its checks of
          what the student's code costs (a call's memory cap, its inputs' sizes, the
          reference's measured need), grading.yml `assignments.<name>.costs`, which its
          suites read with `cfg.costs(name)`.
    TYPED its questions answered with words typed into a marked cell, {question: {"tag",
          "targets", "words": {target: allowed words}, "shape": the target holding a
          shape, or None}}: plain data, the reader's rule for that cell (`judge.by_hand`).

and its folder may hold `battery*.py`, its hostile battery cases (`battery_modules`),
`similar_class.py`, its synthetic class for the similarity audit (`similar_class`), and
(with a RUN) `run_seeds.py`, its run measured on the reference over seeds (`run_seeds`:
`add_options(parser)`, `main(args, cfg)`; bench/run_seeds.py).

The generic layers (config, build, audit, judge, bench) ask here and never name an
assignment. The lookup is by name at run time, so the public part of the kit may ask
too: where the private root is absent (a student's copy) no assignment declares
anything, and nothing that needs a declaration runs there, but for the typed forms
(`typed_forms`), which the public check reads as the grade does: the build writes them
into the public wheel (`layout.PUBLIC_TYPED`), and there they are read from that copy.
"""

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder import layout

PACKAGE = "autograder.private.assignments"  # the package of layout.ASSIGNMENTS
RUN_QUESTION = "training_run"  # the question an assignment's run in the grader scores


@dataclass(frozen=True)
class Run:
    """An assignment's training run in the grader, as grading.yml sets it."""

    schema: Any  # an `autograder.schema.Section`: what its settings may be
    legacy_section: str  # the top-level grading.yml section older course files held them in
    text: Callable[[dict[str, Any], float, str], str]  # (settings, points, lang): its kit-grading-run cell


def names() -> list[str]:
    """Every assignment with a folder under the private root (none without the root)."""
    if not layout.ASSIGNMENTS.is_dir():
        return []
    return sorted(p.name for p in layout.ASSIGNMENTS.iterdir() if (p / "__init__.py").is_file())


def module(name: str) -> Any:
    """The declaration of `name` (its folder's package), or None where it has no folder."""
    if not (layout.ASSIGNMENTS / name / "__init__.py").is_file():
        return None
    return importlib.import_module(f"{PACKAGE}.{name}")


def run(name: str) -> Run | None:
    """`name`'s training run in the grader, or None: it declares none."""
    declared = module(name)
    return getattr(declared, "RUN", None) if declared is not None else None


def costs(name: str) -> Any:
    """The schema of `name`'s cost settings (`COSTS`), or None: it grades no cost."""
    declared = module(name)
    return getattr(declared, "COSTS", None) if declared is not None else None


def similar_class(name: str) -> Any:
    """`name`'s synthetic class for the similarity audit (its folder's `layout.SIMILAR_CLASS`:
    `FUNCTIONS`, `honest_student(rng)`), or None where it has none."""
    if not (layout.ASSIGNMENTS / name / layout.SIMILAR_CLASS).is_file():
        return None
    return importlib.import_module(f"{PACKAGE}.{name}.{layout.SIMILAR_CLASS.removesuffix('.py')}")


def run_seeds(name: str) -> Any:
    """`name`'s run measured over seeds (its folder's `layout.RUN_SEEDS`), or None where it has none."""
    if not (layout.ASSIGNMENTS / name / layout.RUN_SEEDS).is_file():
        return None
    return importlib.import_module(f"{PACKAGE}.{name}.{layout.RUN_SEEDS.removesuffix('.py')}")


def battery_modules() -> list[str]:
    """The module names of every assignment's hostile battery cases (its folder's
    battery*.py), for the battery to import: each registers its cases on import."""
    return [
        f"{PACKAGE}.{name}.{path.stem}"
        for name in names()
        for path in sorted((layout.ASSIGNMENTS / name).glob(f"{layout.BATTERY_PREFIX}*.py"))
    ]


def typed_forms() -> dict[str, dict[str, Any]]:
    """{question: its word form as plain data} of every assignment's `TYPED`; where the
    private root is absent (the public wheel), the copy the build wrote (`public_typed`)."""
    if not layout.ASSIGNMENTS.is_dir():
        copy = layout.PACKAGE / layout.PUBLIC_TYPED
        return json.loads(copy.read_text(encoding="utf-8")) if copy.is_file() else {}
    out: dict[str, dict[str, Any]] = {}
    for name in names():
        for question, form in (getattr(module(name), "TYPED", None) or {}).items():
            if question in out:
                raise ValueError(f"two assignments declare the typed question {question!r}")
            out[question] = form
    return out


def public_typed() -> bytes:
    """`typed_forms()` as the public wheel carries it (`layout.PUBLIC_TYPED`)."""
    return (json.dumps(typed_forms(), indent=1, sort_keys=True) + "\n").encode("utf-8")


def legacy_runs() -> dict[str, list[str]]:
    """{old top-level section: the assignments whose run it held}."""
    out: dict[str, list[str]] = {}
    for name in names():
        declared = run(name)
        if declared is not None:
            out.setdefault(declared.legacy_section, []).append(name)
    return out

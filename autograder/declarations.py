"""What an assignment declares about itself, read from its own folder.

Each assignment's folder under the private root (`layout.ASSIGNMENTS/<name>/`) is a
package whose `__init__.py` may declare:

    RUN   its training run in the grader (a `Run`), when it has a `training_run`
          question: the schema its settings (grading.yml `assignments.<name>.run`)
          are checked against, the top-level section older course files held them
          in, and the text of its `kit-grading-run` cell.

and its folder may hold `battery*.py`, its hostile battery cases (`battery_modules`), and
`similar_class.py`, its synthetic class for the similarity audit (`similar_class`).

The generic layers (config, build, audit, judge, bench) ask here and never name an
assignment. The lookup is by name at run time, so the public part of the kit may ask
too: where the private root is absent (a student's copy) no assignment declares
anything, and nothing that needs a declaration runs there.
"""

import importlib
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


def similar_class(name: str) -> Any:
    """`name`'s synthetic class for the similarity audit (its folder's `layout.SIMILAR_CLASS`:
    `FUNCTIONS`, `honest_student(rng)`), or None where it has none."""
    if not (layout.ASSIGNMENTS / name / layout.SIMILAR_CLASS).is_file():
        return None
    return importlib.import_module(f"{PACKAGE}.{name}.{layout.SIMILAR_CLASS.removesuffix('.py')}")


def battery_modules() -> list[str]:
    """The module names of every assignment's hostile battery cases (its folder's
    battery*.py), for the battery to import: each registers its cases on import."""
    return [
        f"{PACKAGE}.{name}.{path.stem}"
        for name in names()
        for path in sorted((layout.ASSIGNMENTS / name).glob(f"{layout.BATTERY_PREFIX}*.py"))
    ]


def legacy_runs() -> dict[str, list[str]]:
    """{old top-level section: the assignments whose run it held}."""
    out: dict[str, list[str]] = {}
    for name in names():
        declared = run(name)
        if declared is not None:
            out.setdefault(declared.legacy_section, []).append(name)
    return out

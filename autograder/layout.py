"""Where the kit's parts are, computed once (standard library only).

PACKAGE   this copy of the `autograder` package
KIT_ROOT  the folder that holds it: a checkout, site-packages, or a zip's kit/
PRIVATE   the one private root (`autograder/private/`): reference solutions,
          the suites' shared library, one folder per assignment (its hidden
          suites, its audit catalog). No worker ever reaches it.
ASSIGNMENTS  the assignments' folders: `ASSIGNMENTS/<name>/` holds its suites
          (test_<question>.py), `catalog/`, battery*.py, messages.yml and
          similar_class.py, a lab's run_seeds.py (see `suite`, `catalog`, `audit_only`,
          `assignment_messages`).
WORKER_SIDE  what of the package a worker may see: the protocol and the
          worker (see `autograder.sandbox.view`).
COURSE    the course's own folder (master notebooks, examples, student
          templates): the checkout, when this copy is one; else None.
"""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
KIT_ROOT = PACKAGE.parent
PRIVATE = PACKAGE / "private"
SOLUTIONS = PRIVATE / "solutions"
SUITES = PRIVATE / "suites"  # the suites' shared library: its modules, conftest.py, pytest.ini
ASSIGNMENTS = PRIVATE / "assignments"
CATALOG_FOLDER = "catalog"  # inside an assignment's folder: read by the audit only, no part of its suites
BATTERY_PREFIX = "battery"  # its battery*.py: its hostile battery cases, the audit's too
MESSAGES_FILE = "messages.yml"  # inside an assignment's folder: its suites' words, both languages
SIMILAR_CLASS = "similar_class.py"  # inside an assignment's folder: its synthetic class (the similarity audit's)
RUN_SEEDS = "run_seeds.py"  # inside a lab's folder: its run measured over seeds (bench/run_seeds.py)
WORKER_SIDE = ("__init__.py", "protocol", "worker")
PUBLIC_TYPED = "typed_forms.json"  # in the public wheel only: the assignments' typed forms (`declarations.typed_forms`)
COURSE = KIT_ROOT if (KIT_ROOT / "assignments").is_dir() else None


def has_private():
    """Whether this copy carries the private root (the public part does not)."""
    return (SUITES).is_dir()


def suite(assignment):
    """The folder of an assignment's hidden suites (its own folder under ASSIGNMENTS)."""
    return ASSIGNMENTS / assignment


def catalog(assignment):
    """The folder of an assignment's audit catalog (known bugs and correct variants)."""
    return ASSIGNMENTS / assignment / CATALOG_FOLDER


def assignment_messages():
    """Each assignment's own messages file (`<name>/messages.yml`), where this copy carries
    the private root: the words its suites fail with, read into the one message catalog."""
    if not has_private():
        return []
    return sorted(ASSIGNMENTS.glob(f"*/{MESSAGES_FILE}"))


def audit_only(rel):
    """Whether a path inside an assignment's folder (relative to it) is the audit's (its
    catalog, its battery cases, its synthetic class) or a bench's (its run over seeds): no
    part of its suites, of a score, or of a grading zip."""
    return (
        rel.parts[0] == CATALOG_FOLDER
        or rel.name.startswith(BATTERY_PREFIX)
        or rel.as_posix() in (SIMILAR_CLASS, RUN_SEEDS)
    )

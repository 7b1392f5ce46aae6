"""Hostile battery cases of this assignment (batch grading): registered into `cases.CASES` on import."""

from autograder import config
from autograder.audit.hostile.cases import case, ipynb, reference
from autograder.private.assignments.scaled_dot_product.battery_cases import FULL, SDP, SDP_QS

# another assignment of grading.yml, the one a forged notebook claims to be (and its total)
CLASSIC = next(a for a in config.load().assignments if a != SDP)
CLASSIC_FULL = sum(config.load().questions(CLASSIC).values())


def _names_assignment(nb, name):
    """The notebook with its metadata and otter's init cell naming `name` (what a student can edit)."""
    meta = nb.setdefault("metadata", {})
    meta["kit_assignment"] = name
    if isinstance(meta.get("otter"), dict):
        meta["otter"]["assignment_name"] = name
    else:
        meta["otter"] = {"assignment_name": name}
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell.get("source"), list) else cell.get("source", "")
        if cell.get("cell_type") == "code" and "otter.Notebook(" in src:
            cell["source"] = f'# Initialize Otter\nimport otter\ngrader = otter.Notebook("{name}.ipynb")\n'
    return nb


@case(
    "metadata_names_other_assignment",
    f"a {SDP} notebook whose metadata and init cell name {CLASSIC} ({CLASSIC_FULL:g} points): "
    f"graded as what its code is, out of {FULL:g}, and told so",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    reason_contains=[f"it was graded as {SDP}"],
)
def _():
    return ipynb(_names_assignment(reference(), CLASSIC))

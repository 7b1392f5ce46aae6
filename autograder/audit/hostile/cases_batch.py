"""Hostile battery cases (cases_batch): registered into `cases.CASES` on import."""

from autograder.audit.hostile.cases import FULL, SDP_QS, case, code_cell, ipynb, others, reference, replace_function  # noqa: F401


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
    "a scaled_dot_product notebook whose metadata and init cell name classic_attention (17 points): "
    "graded as what its code is, out of 10, and told so",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    reason_contains=["it was graded as scaled_dot_product"],
)
def _():
    return ipynb(_names_assignment(reference(), "classic_attention"))

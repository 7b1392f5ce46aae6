"""The settings of this assignment's cost checks, as grading.yml sets them: their schema
(`assignments.<this assignment>.costs`), declared as `COSTS` by the folder's `__init__.py`.
Staff-facing, as autograder/schema.py's words are."""

from typing import Any

from autograder.schema import COUNT, Int, Invalid, Number, Section

MOST_MB = 1 << 20


def _the_full_matrix_cannot_fit(costs: dict[str, Any], key: str) -> None:
    """The capped call measures something only where its float32 score matrix alone reaches
    the cap (a full-matrix attention cannot fit) and the reference's need is under it."""
    m = costs["memory"]
    scores_mb = m["length"] ** 2 * 4 / 2**20
    if scores_mb < m["cap_mb"]:
        raise Invalid(
            f"{key}.memory.length",
            f"must make the float32 scores ({scores_mb:g} MiB) reach cap_mb ({m['cap_mb']:g}): "
            "else a full-matrix attention fits",
            m["length"],
        )
    if m["reference_mb"] >= m["cap_mb"]:
        raise Invalid(f"{key}.memory.reference_mb", f"must be under cap_mb ({m['cap_mb']:g})", m["reference_mb"])


# grading.yml `assignments.efficient_attention.costs`: test_fits_in_memory's capped call
COSTS = Section(
    {
        "memory": Section(
            {
                "length": COUNT,
                "d_k": COUNT,
                "block_size": COUNT,
                "cap_mb": Number(0, MOST_MB, above=True, unit="MB"),
                "reference_mb": Number(0, MOST_MB, above=True, unit="MB"),
                "seed": Int(0),
            }
        )
    },
    rules=(_the_full_matrix_cannot_fit,),
)

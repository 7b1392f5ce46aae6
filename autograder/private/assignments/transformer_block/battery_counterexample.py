"""Hostile battery cases of this assignment (its folder's battery): a module's counterexample a
student can type in. Registered into `cases.CASES` on import."""

from autograder.audit.hostile.cases import _catalog_source, append, case, ipynb, reference

LAB = "transformer_block"


@case(
    "lm_counterexample_shrinks",
    "TransformerLM adds the positions after the blocks (a catalog bug): its counterexample "
    "shrinks to a few tokens, never a tensor cut to its first numbers",
    assignment=LAB,
    questions_lose=["transformer_lm"],
    must_not_contain=["(the first 12 of"],
)
def _():
    nb = reference(LAB, demo=False)
    return ipynb(append(nb, _catalog_source(LAB, "lm_positions_after_blocks")))

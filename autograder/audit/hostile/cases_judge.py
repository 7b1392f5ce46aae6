"""Hostile battery cases (cases_judge): registered into `cases.CASES` on import."""
from autograder.audit.hostile.cases import case, code_cell, ipynb, others, reference, replace_function  # noqa: F401

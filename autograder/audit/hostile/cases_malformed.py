"""Hostile battery cases (cases_malformed): registered into `cases.CASES` on import."""
from autograder.audit.hostile.cases import case, code_cell, ipynb, others, reference, replace_function  # noqa: F401

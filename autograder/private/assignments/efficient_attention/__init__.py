"""The `efficient_attention` assignment's folder: its hidden suites (test_<question>.py), its words
(messages.yml, both languages), its audit catalog (catalog/) and its cost bench
(`costs_bench.py`, run by bench/cost_margins.py); the settings of its cost checks
(`COSTS`: `cost_settings.py`, grading.yml `assignments.efficient_attention.costs`). Made by `python -m autograder new`."""

from autograder.private.assignments.efficient_attention.cost_settings import COSTS  # noqa: F401 - declared

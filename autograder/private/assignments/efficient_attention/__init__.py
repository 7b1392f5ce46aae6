"""The `efficient_attention` assignment's folder: its hidden suites (test_<question>.py), its words
(messages.yml, both languages), its audit catalog (catalog/) and its cost bench
(`costs_bench.py`, run by bench/cost_margins.py). Made by `python -m autograder new`."""

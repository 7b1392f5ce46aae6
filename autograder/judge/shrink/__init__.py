"""One shrinking engine (`engine`) with a strategy per kind of question: functions and
their gradients (`functions`), modules (`modules`); the training lab's steps keep theirs
beside their runs (its suite). What the student reads of a counterexample:
`autograder.judge.counterexample`."""

from autograder.judge.shrink.engine import (
    REFUSALS,
    STATS,
    Budget,
    Differs,
    Ledger,
    Outputs,
    Plain,
    Refused,
    Sizes,
    Strategy,
    budget,
    ledger,
    refusing,
    search,
    seed_of,
)
from autograder.judge.shrink.functions import Found, search_function
from autograder.judge.shrink.modules import ModuleCase, ModuleFound, search_module

__all__ = [
    "REFUSALS",
    "STATS",
    "Budget",
    "Differs",
    "Found",
    "Ledger",
    "ModuleCase",
    "ModuleFound",
    "Outputs",
    "Plain",
    "Refused",
    "Sizes",
    "Strategy",
    "budget",
    "ledger",
    "refusing",
    "search",
    "search_function",
    "search_module",
    "seed_of",
]

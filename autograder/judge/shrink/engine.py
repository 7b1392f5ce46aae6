"""One shrinking engine for every counterexample the judge shows (functions, modules,
gradients, training steps), after hypothesis's shrinker: a candidate, passes that shrink
its sizes then its values, a budget ledger, deterministic seeds.

A strategy (one per kind of question) says what a candidate is: its named sizes (the
failing case's), the kinds of values to find a first difference with, how to make a
fresh candidate at given sizes and values from a seed (the reference runs there: a
candidate it cannot make is a declared refusal, `Refused` or None, and costs nothing),
and how to run the student's code on it (one call to the worker, charged to the
budget). The engine owns the order of the search:

1. the strategy's starts in turn, until one shows a difference (the engine searches
   nothing when none does): a function's failing sizes with each kind of values; a
   module's sizes all at their smallest first (hypothesis's "everything minimal"), then
   its failing sizes; a training step's smallest runs, fewest steps first;
2. fewest elements: every size variable tried smaller, from its floor up, in the
   strategy's order (the largest first), a few calls each, in passes until one changes
   nothing; then two at once;
3. the simplest values (small integers) at the sizes found.

Every difference found is kept as the best (each is smaller or simpler than the one
before); a candidate is made from its seed, so one already tried is never tried again.
Only a declared refusal skips a candidate: any other exception, raised by the
kit's own code (a suite's case maker, the reference, a helper), propagates, and the
judge reports it as its own fault (`KitPlugin.second_looks`).
"""

import time
import weakref
import zlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Generic, Protocol, TypeVar

import torch

Outputs = dict[str, torch.Tensor]
Differs = Callable[[Outputs, Outputs], bool]

CALLS_PER_SIZE = 3  # student calls tried for one size variable in one pass (refusals are free)
PASSES = 3  # passes over the size variables (a pass with no change ends the search of sizes)


@dataclass(frozen=True)
class Budget:
    """grading.yml `scoring.counterexample` (each key optional): the search's budget per question."""

    seconds: float = 2.0  # wall clock of the search, per question
    calls: int = 30  # calls to the student's code in the worker, per question (0: no search)
    numbers: int = 12  # numbers shown per tensor
    decimals: int = 3  # shown rounded to this many decimals
    seed: int = 0  # the inputs are drawn from this seed (and the question's name)


def budget(cfg: Any) -> Budget:
    """The search's budget from a Config (its `scoring` section); what it leaves out keeps
    Budget's own value (the kit's grading.yml sets every key)."""
    scoring = getattr(cfg, "scoring", None) or {}
    own = scoring.get("counterexample") if isinstance(scoring, dict) else None
    own = own if isinstance(own, dict) else {}
    values = {**asdict(Budget()), **{k: v for k, v in own.items() if k in {f.name for f in fields(Budget)}}}
    return Budget(
        seconds=float(values["seconds"]),
        calls=int(values["calls"]),
        numbers=max(1, int(values["numbers"])),
        decimals=max(0, int(values["decimals"])),
        seed=int(values["seed"]),
    )


@dataclass
class Ledger:
    """What one question's searches spent, and whether one found its counterexample."""

    calls: int = 0
    seconds: float = 0.0
    found: bool = False

    def spent(self, limits: Budget) -> bool:
        """Whether nothing is left to search with (or one search already found its case)."""
        return self.found or self.calls >= limits.calls or self.seconds >= limits.seconds


_LEDGERS: "weakref.WeakKeyDictionary[object, dict[str, Ledger]]" = weakref.WeakKeyDictionary()
STATS: list[dict[str, Any]] = []  # one record per search in this process (bench/counterexamples.py reads them)


def ledger(owner: object, question: str) -> Ledger:
    """The ledger of `question` for one submission (`owner`: its proxy to the worker)."""
    return _LEDGERS.setdefault(owner, {}).setdefault(question, Ledger())


def seed_of(*parts: object) -> int:
    """A deterministic seed from any printable parts (the budget's seed, a name, ...)."""
    return zlib.crc32(repr(parts).encode()) & 0x7FFFFFFF


class Refused(Exception):
    """A declared refusal: the strategy cannot make a candidate at these sizes or values
    (the reference refuses inputs out of its contract, a case maker sizes it does not
    take). The only exception the search reads as "not a candidate"."""


# What the reference raises on an input out of its contract: its own ValueError (the
# refusal the suites check the student's function makes too), torch's RuntimeError of
# shapes that do not fit. A NameError, KeyError, TypeError ... is the kit's own bug.
REFUSALS = (ValueError, RuntimeError)


def refusing(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, its declared refusals (REFUSALS) raised as `Refused`."""
    try:
        return fn(*args, **kwargs)
    except REFUSALS as exc:
        raise Refused(f"{type(exc).__name__}: {exc}") from exc


class _Stop(Exception):
    """The budget is spent."""


class Found(Protocol):
    """What a strategy's run returns when the student's code differs: anything with the
    figures the engine records."""

    calls: int
    seconds: float

    def largest(self) -> int: ...


F = TypeVar("F", bound=Found)
P = TypeVar("P")
Sizes = dict[Hashable, int]


class Strategy(Protocol, Generic[P, F]):  # type: ignore[misc]
    """One kind of counterexample: how its candidates are made and run."""

    def sizes(self) -> Sizes:
        """The failing case's size variables and their values."""
        ...

    def starts(self) -> Sequence[tuple[Sizes, Hashable, int]]:
        """(sizes, values, salt) to find a first difference with, in order (mostly the
        failing case's sizes with each kind of values)."""
        ...

    def simplest(self, values: Hashable) -> Sequence[tuple[Hashable, int]]:
        """(values, salt) tried last, at the sizes found (`values`: those it was found with)."""
        ...

    def candidates(self, sizes: Sizes, var: Hashable, smaller: int) -> Sequence[Sizes]:
        """The sizes to try with `var` at `smaller` (with any size that must follow it)."""
        ...

    def floor(self, var: Hashable) -> int:
        """The smallest value `var` may take."""
        ...

    def order(self, sizes: Sizes) -> list[Hashable]:
        """The size variables in the order they are shrunk."""
        ...

    def make(self, sizes: Sizes, values: Hashable, salt: int) -> P | None:
        """A fresh candidate (None or `Refused`: not one; the reference runs here)."""
        ...

    def run(self, candidate: P, seconds: float) -> F | None:
        """The student's code on `candidate` (one call): what differs, or None."""
        ...


def search(name: str, strategy: "Strategy[Any, F]", limits: Budget, spent: Ledger | None = None) -> F | None:
    """The smallest candidate found on which the student's code and the reference differ,
    within what is left of the question's budget (`spent`, updated); or None."""
    spent = spent if spent is not None else Ledger()
    if limits.calls <= 0:
        return None
    start = time.monotonic()
    seconds_left = limits.seconds - spent.seconds
    calls_at_start = spent.calls
    best: F | None = None
    tried: set[tuple[Any, ...]] = set()

    def attempt(at: Sizes, values: Hashable, salt: int) -> F | None:
        nonlocal best
        key = (tuple(sorted(at.items(), key=repr)), values, salt)
        if key in tried:  # made from its seed: the same candidate, the same answer
            return None
        tried.add(key)
        try:
            candidate = strategy.make(dict(at), values, salt)
        except Refused:
            return None
        if candidate is None:
            return None
        left = seconds_left - (time.monotonic() - start)
        if spent.calls >= limits.calls or left <= 0:
            raise _Stop
        spent.calls += 1
        found = strategy.run(candidate, max(0.2, left))
        if found is not None:
            best = found
        return found

    sizes = strategy.sizes()
    try:
        values: Hashable = None
        for at, values, salt in strategy.starts():
            if attempt(at, values, salt) is not None:
                sizes = at
                break
        if best is not None:
            _shrink(strategy, sizes, values, attempt, spent)
    except _Stop:
        pass
    elapsed = time.monotonic() - start
    spent.seconds += elapsed
    STATS.append(
        {
            "name": name,
            "found": best is not None,
            "calls": spent.calls - calls_at_start,
            "seconds": elapsed,
            "largest": best.largest() if best is not None else None,
        }
    )
    if best is not None:
        best.calls, best.seconds = spent.calls - calls_at_start, elapsed
        spent.found = True
    return best


def _shrink(
    strategy: "Strategy[Any, Any]",
    sizes: Sizes,
    values: Hashable,
    attempt: Callable[[Sizes, Hashable, int], Any],
    spent: Ledger,
) -> None:
    """Passes 2 and 3 from a difference found at `sizes` with `values`. Raises _Stop when the
    budget is spent."""
    for _ in range(PASSES):
        changed = False
        for var in strategy.order(sizes):
            tries = 0
            for smaller in range(strategy.floor(var), sizes[var]):
                if tries >= CALLS_PER_SIZE:
                    break
                found = None
                for candidate in strategy.candidates(sizes, var, smaller):
                    calls = spent.calls
                    found = attempt(candidate, values, 0)
                    tries += spent.calls - calls
                    if found is not None or spent.calls > calls:  # a difference, or none where it ran
                        break
                if found is not None:
                    sizes, changed = candidate, True
                    break
        if not changed:
            break
    ordered = strategy.order(sizes)
    for i, v in enumerate(ordered):  # two sizes at once
        for w in ordered[i + 1 :]:
            tries = 0
            low_v, low_w = strategy.floor(v), strategy.floor(w)
            pairs = [(a, b) for a in range(low_v, min(sizes[v], 13)) for b in range(low_w, min(sizes[w], 13))]
            for a, b in sorted(pairs, key=lambda p: p[0] + p[1]):
                if tries >= CALLS_PER_SIZE:
                    break
                calls = spent.calls
                found = attempt({**sizes, v: a, w: b}, values, 0)
                tries += spent.calls - calls
                if found is not None:
                    sizes = {**sizes, v: a, w: b}
                    break
    for simpler, salt in strategy.simplest(values):
        if attempt(sizes, simpler, salt) is not None:
            return


@dataclass
class Plain:
    """The defaults of a strategy (mixed in): one size at a time, the largest first, down
    to 1."""

    def candidates(self, sizes: Sizes, var: Hashable, smaller: int) -> Sequence[Sizes]:
        return [{**sizes, var: smaller}]

    def floor(self, var: Hashable) -> int:
        return 1

    def order(self, sizes: Sizes) -> list[Hashable]:
        return sorted(sizes, key=lambda v: -sizes[v])  # the largest first


__all__ = [
    "Budget",
    "Differs",
    "Found",
    "Ledger",
    "Outputs",
    "Plain",
    "REFUSALS",
    "Refused",
    "STATS",
    "Sizes",
    "Strategy",
    "budget",
    "ledger",
    "refusing",
    "search",
    "seed_of",
]

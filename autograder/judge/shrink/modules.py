"""The strategy for a module question (a class the worker builds and loads parameters
into): the suite makes a fresh case at given named sizes from a seed (the module's
arguments, its parameters, its inputs); the student's module and the reference's get the
same parameters, made simple with the inputs (one decimal, then integers).

The search starts with every size at its smallest at once (1, then 2, each capped at
the failing case's own), and only then at the failing case's sizes: a module
with many sizes (a language model: batch, length, vocabulary, width, heads, feed-forward
width, layers) cannot shrink them one by one within its budget, and a bug of a whole
model mostly shows in its smallest copy. A case the suite cannot make at some sizes is a declared refusal (`make` returns
None or raises `Refused`, such as a width not divisible by the heads) and costs no call;
any other exception from `make` or the reference is the kit's and propagates.
"""

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder.judge.shrink import engine
from autograder.judge.shrink.engine import Budget, Differs, Ledger, Outputs, Plain, Sizes, refusing, seed_of
from autograder.judge.shrink.functions import Found, equal_any


@dataclass
class ModuleCase:
    """One call of a module, as a hidden suite makes it at given sizes from a seed: the
    class as the worker builds it, the parameters loaded into the student's module and
    the reference's, the forward's inputs, and the reference on them."""

    label: str  # the class with its arguments, as the student reads it: "MultiHeadAttention(2, 2, bias=True)"
    construct: dict[str, Any]  # what the worker builds: {"args": [...], "kwargs": {...}}
    state: dict[str, torch.Tensor]  # float64 parameters by name
    args: list[Any]  # the forward's inputs
    kwargs: dict[str, Any]
    arg_names: list[str]  # the forward's names for `args`
    # the reference module with these parameters, on these inputs (float64): its outputs in order
    reference: Callable[[dict[str, torch.Tensor], list[Any], dict[str, Any]], Sequence[torch.Tensor]]


@dataclass
class ModuleFound(Found):
    """A module counterexample: a Found, with the module's parameters and how it was built."""

    label: str = ""
    state: dict[str, torch.Tensor] = field(default_factory=dict)
    arg_names: list[str] = field(default_factory=list)

    def largest(self) -> int:
        """Elements in the largest tensor shown (the parameters count when shown whole)."""
        return max([super().largest(), *(int(v.numel()) for v in self.state.values())])


ModuleStudent = Callable[[ModuleCase, float], "Outputs | None"]
Make = Callable[[dict[str, int], int], "ModuleCase | None"]


def simplified(x: Any, values: str) -> Any:
    """A float tensor's values made simple: one decimal ("decimal") or integers ("integer")
    (a zero stays a zero: padding and masked positions keep what the suite gave them)."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return x
    return x.double().round() if values == "integer" else x.double().round(decimals=1)


def same_call(args: Sequence[Any], kwargs: dict[str, Any], sent: Sequence[torch.Tensor]) -> bool:
    """Whether every tensor input equals one of `sent` (a module's masks, lengths and tokens
    at small sizes can each equal a hidden one: its structure, not its data; never all of
    them with its float values)."""
    given = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)]
    return bool(given) and all(equal_any([v], {}, sent) for v in given)


@dataclass
class ModuleStrategy(Plain):
    """A module's candidates: fresh cases from the suite's `make`, values made simple."""

    failing: dict[str, int]
    make_case: Make
    student: ModuleStudent
    out_names: Sequence[str]
    differs: Differs
    seed: int
    sent: Sequence[torch.Tensor]

    def sizes(self) -> Sizes:
        out: Sizes = {}
        out.update(self.failing)
        return out

    def starts(self) -> Sequence[tuple[Sizes, Hashable, int]]:
        """Every size at its smallest first (1, then 2, each at most the failing case's), then
        the failing case's own sizes (a bug that shows only there)."""
        sizes = self.sizes()
        small = [{v: min(s, k) for v, s in sizes.items()} for k in (1, 2)] if len(sizes) > 1 else []
        firsts = [at for i, at in enumerate(small) if at != sizes and at not in small[:i]]
        return [*((at, "decimal", 0) for at in firsts), (sizes, "decimal", 0), (sizes, "decimal", 1)]

    def order(self, sizes: Sizes) -> list[Hashable]:
        """The largest first; among equal ones, the smallest in the failing case first (a
        number of layers or heads multiplies the parameters shown)."""
        return sorted(sizes, key=lambda v: (-sizes[v], self.failing[str(v)]))

    def simplest(self, values: Hashable) -> Sequence[tuple[Hashable, int]]:
        return [("integer", 0), ("integer", 1)]

    def make(self, sizes: Sizes, values: Hashable, salt: int) -> tuple[ModuleCase, Outputs] | None:
        case = self.make_case(dict(sizes), self.seed + salt)  # type: ignore[arg-type]
        if case is None:
            return None
        state = {n: simplified(v, str(values)) for n, v in case.state.items()}
        a = [simplified(v, str(values)) for v in case.args]
        k = {n: simplified(v, str(values)) for n, v in case.kwargs.items()}
        floats = [
            v for v in [*a, *k.values(), *state.values()] if isinstance(v, torch.Tensor) and v.is_floating_point()
        ]
        if equal_any(floats, {}, self.sent) or same_call(a, k, self.sent):
            return None
        with torch.no_grad():
            out = list(refusing(case.reference, state, a, k))
        if len(out) != len(self.out_names) or not all(isinstance(v, torch.Tensor) for v in out):
            return None
        made = ModuleCase(case.label, case.construct, state, a, k, case.arg_names, case.reference)
        return made, dict(zip(self.out_names, out))

    def run(self, candidate: tuple[ModuleCase, Outputs], seconds: float) -> ModuleFound | None:
        case, expected = candidate
        got = self.student(case, seconds)
        if got is None or not self.differs(got, expected):
            return None
        return ModuleFound(
            case.args, case.kwargs, got, expected, label=case.label, state=case.state, arg_names=list(case.arg_names)
        )


def search_module(
    name: str,
    sizes: dict[str, int],
    make: Make,
    student: ModuleStudent,
    out_names: Sequence[str],
    differs: Differs,
    limits: Budget,
    spent: Ledger | None = None,
    sent: Sequence[torch.Tensor] = (),
) -> ModuleFound | None:
    """The smallest case found on which the student's module `name` and the reference
    module, built with the same parameters, differ (`differs`); or None.

    `sizes` are the failing case's named sizes ({"B": 3, "D": 10, ...}); `make(sizes,
    seed)` makes a fresh case at other sizes (None or `Refused`: sizes the module does not
    take); `student(case, cpu_seconds)` calls the student's module built as
    `case.construct` with `case.state` loaded (None: it raised or returned something else
    than tensors of the reference's shapes). A case is skipped where a float tensor (an
    input or a parameter), or every input, equals one of `sent` (the failing case's
    inputs, parameters and expected outputs)."""
    if not sizes:
        return None
    strategy = ModuleStrategy(dict(sizes), make, student, out_names, differs, seed_of(limits.seed, name), list(sent))
    return engine.search(name, strategy, limits, spent)

"""The strategy for a function question (and its gradients): the smallest input on which
the student's function and the reference differ, from the failing call's shapes.

1. at the failing call's own shapes, fresh one-decimal numbers with a mask that hides
   one key, then one whose first row hides every key, then a random one; where the
   failing input holds large numbers (mean or spread above 10), small multiples of its
   spread around its mean (each to one significant digit: the scale, never the values),
   for the bugs that show only there;
2. fewest elements: every size of the failing call (an axis length shared by the
   inputs, or a size passed as a positional int, such as a number of heads) is tried
   smaller, each in turn, with a concatenation's width (d_s + d_h) following it;
3. the simplest values: small integers (-2 .. 2).

The inputs are always made fresh from a seed (a candidate equal to one of the failing
call's own inputs is skipped), so the expected output shown is the reference's on those
fresh inputs, never on a hidden one. The reference decides what a valid input is: it
returns None or raises a declared refusal (`engine.refusing`) and the candidate costs no
call to the worker; the student's function refusing, or answering with another shape, is
not a counterexample of a wrong value, and the search goes on.
"""

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from autograder.judge.shrink import engine
from autograder.judge.shrink.engine import Budget, Differs, Ledger, Outputs, Plain, Sizes, seed_of

Student = Callable[[list[Any], dict[str, Any], float], "Outputs | None"]
Reference = Callable[[list[Any], dict[str, Any]], "Outputs | None"]


@dataclass
class Found:
    """A counterexample: the inputs (as the reference's parameters take them), what the
    student's function returned and what the reference returns, on those inputs."""

    args: list[Any]
    kwargs: dict[str, Any]
    got: Outputs
    expected: Outputs
    calls: int = 0  # calls to the student's code this search made
    seconds: float = 0.0

    def largest(self) -> int:
        """Elements in the largest tensor shown (inputs and outputs)."""
        tensors = [v for v in [*self.args, *self.kwargs.values()] if isinstance(v, torch.Tensor)]
        tensors += [*self.got.values(), *self.expected.values()]
        return max((int(x.numel()) for x in tensors), default=0)


@dataclass(frozen=True)
class _Leaf:
    kind: str  # "float", "bool", "int" (tensors), "size" (a positional int size), "const"
    shape: tuple[int, ...] = ()
    dtype: torch.dtype | None = None
    value: Any = None
    low: int = 0  # int tensors: the range their values are drawn from
    high: int = 0
    bounds: tuple[int, ...] = ()  # int tensors: the sizes their values must stay below
    center: float = 0.0  # float tensors: the failing input's mean and spread, each to one significant digit
    spread: float = 1.0


def _one_digit(x: float) -> float:
    """`x` rounded to one significant digit (0 stays 0)."""
    if x == 0 or x != x or abs(x) == float("inf"):
        return 0.0
    return float(f"{x:.0e}")


def _leaves(args: Sequence[Any], kwargs: dict[str, Any]) -> list[_Leaf] | None:
    """What each argument is (None: an argument the search cannot remake, a nested one)."""
    out: list[_Leaf] = []
    sizes: set[int] = set()
    for v in [*args, *kwargs.values()]:
        if isinstance(v, torch.Tensor):
            sizes |= {int(s) for s in v.shape if s > 1}
    for i, v in enumerate([*args, *kwargs.values()]):
        positional = i < len(args)
        if isinstance(v, torch.Tensor):
            shape = tuple(int(s) for s in v.shape)
            if v.device.type != "cpu" or v.requires_grad:
                return None
            if v.dtype == torch.bool:
                out.append(_Leaf("bool", shape))
            elif v.is_floating_point():
                x = v.detach().double()
                x = x[torch.isfinite(x)]
                center = _one_digit(float(x.mean())) if x.numel() else 0.0
                spread = _one_digit(float(x.std())) if x.numel() > 1 else 1.0
                out.append(_Leaf("float", shape, v.dtype, center=center, spread=spread or 1.0))
            elif not v.is_complex():
                low = max(0, int(v.min())) if v.numel() else 0
                high = int(v.max()) if v.numel() else 0
                out.append(_Leaf("int", shape, v.dtype, low=low, high=high, bounds=tuple(s for s in sizes if s > high)))
            else:
                return None
        elif positional and type(v) is int and v > 1:
            out.append(_Leaf("size", value=v))
        elif v is None or isinstance(v, (bool, int, float, str)):
            out.append(_Leaf("const", value=v))
        else:
            return None
    return out


def _variables(leaves: Sequence[_Leaf]) -> list[int]:
    """The size variables: each distinct axis length above 1 (shared by every axis of that
    length), and each positional int size; by their original value, largest first."""
    found: set[int] = set()
    for leaf in leaves:
        if leaf.kind in ("float", "bool", "int"):
            found |= {s for s in leaf.shape if s > 1}
        elif leaf.kind == "size":
            found.add(int(leaf.value))
    return sorted(found, reverse=True)


def _make(
    leaves: Sequence[_Leaf], n_args: int, names: Sequence[str], sizes: dict[int, int], values: str, mask: str, seed: int
) -> tuple[list[Any], dict[str, Any]]:
    """Fresh inputs of the leaves' kinds at `sizes` ({original size: now}); `values`
    "integer" (-2 .. 2), "decimal" (one decimal) or "scaled", `mask` "one_hidden",
    "dead_row" or "random"."""
    made: list[Any] = []
    for i, leaf in enumerate(leaves):
        shape = tuple(sizes.get(s, s) for s in leaf.shape)
        g = torch.Generator().manual_seed(seed_of(seed, i, shape, values, mask))
        if leaf.kind == "float":
            assert leaf.dtype is not None
            if values == "integer":
                x = torch.randint(-2, 3, shape, generator=g).double()
            elif values == "scaled":  # the failing input's magnitude (large scores), small multiples of its spread
                x = leaf.center + leaf.spread * torch.randint(-2, 3, shape, generator=g).double()
            else:
                x = (torch.randn(shape, generator=g, dtype=torch.float64) * 15).round() / 10
            made.append(x.to(leaf.dtype))
        elif leaf.kind == "bool":
            if mask == "random":
                m = torch.rand(shape, generator=g) < 0.6
                if m.dim():
                    m.select(-1, 0).fill_(True)
            else:
                m = torch.ones(shape, dtype=torch.bool)
                if mask == "dead_row" and m.dim() and m.numel():
                    m.view(-1, shape[-1])[0] = False  # a row with no allowed key
                elif m.dim() and shape[-1] > 1 and m.numel():
                    m.view(-1, shape[-1])[0, -1] = False  # one hidden key
            made.append(m)
        elif leaf.kind == "int":
            high = leaf.high
            if leaf.bounds:
                high = min(high, min(sizes.get(b, b) for b in leaf.bounds) - 1)
            low = min(leaf.low, high)
            made.append(torch.randint(low, high + 1, shape, generator=g).to(leaf.dtype or torch.int64))
        elif leaf.kind == "size":
            made.append(sizes.get(int(leaf.value), int(leaf.value)))
        else:
            made.append(leaf.value)
    return made[:n_args], dict(zip(names, made[n_args:]))


def equal_any(args: Sequence[Any], kwargs: dict[str, Any], sent: Sequence[torch.Tensor]) -> bool:
    """Whether any tensor input equals one of `sent` (the failing check's own inputs)."""
    for v in [*args, *kwargs.values()]:
        if isinstance(v, torch.Tensor) and v.numel():
            for s in sent:
                if s.shape == v.shape and s.dtype == v.dtype and torch.equal(s.detach().cpu(), v):
                    return True
    return False


@dataclass
class FunctionStrategy(Plain):
    """A function's candidates: fresh inputs of the failing call's kinds at smaller sizes."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    student: Student
    reference: Reference
    differs: Differs
    seed: int
    leaves: list[_Leaf]

    def sizes(self) -> Sizes:
        return {v: v for v in _variables(self.leaves)}

    def starts(self) -> Sequence[tuple[Sizes, Hashable, int]]:
        masked = any(leaf.kind == "bool" for leaf in self.leaves)
        masks = ("one_hidden", "dead_row", "random") if masked else ("one_hidden",)
        kinds = ["decimal"]
        if any(leaf.kind == "float" and (abs(leaf.center) > 10 or leaf.spread > 10) for leaf in self.leaves):
            kinds.append("scaled")  # large scores: a bug that shows only there (overflow, a finite fill)
        return [(self.sizes(), (kind, mask), 0) for kind in kinds for mask in masks]

    def simplest(self, values: Hashable) -> Sequence[tuple[Hashable, int]]:
        _, mask = cast(tuple[str, str], values)
        return [(("integer", mask), 0), (("integer", mask), 1)]

    def candidates(self, sizes: Sizes, var: Hashable, smaller: int) -> Sequence[Sizes]:
        """`var` at `smaller` alone, then with each size that is the sum of `var` and
        another (a concatenation's width, d_s + d_h) following it."""
        plain = {**sizes, var: smaller}
        out = [plain]
        for w in sizes:
            for u in sizes:
                if len({w, u, var}) == 3 and w == var + u:  # type: ignore[operator]  # by their original values
                    out.append({**plain, w: smaller + sizes[u]})
        return out

    def make(self, sizes: Sizes, values: Hashable, salt: int) -> tuple[list[Any], dict[str, Any], Outputs] | None:
        kind, mask = cast(tuple[str, str], values)
        sent = [v for v in [*self.args, *self.kwargs.values()] if isinstance(v, torch.Tensor)]
        at = cast(dict[int, int], sizes)
        a, k = _make(self.leaves, len(self.args), list(self.kwargs), at, kind, mask, self.seed + salt)
        if equal_any(a, k, sent):
            return None
        expected = self.reference(a, k)
        return None if expected is None else (a, k, expected)

    def run(self, candidate: tuple[list[Any], dict[str, Any], Outputs], seconds: float) -> Found | None:
        a, k, expected = candidate
        got = self.student(a, k, seconds)
        if got is None or not self.differs(got, expected):
            return None
        return Found(a, k, got, expected)


def search_function(
    name: str,
    args: Sequence[Any],
    kwargs: dict[str, Any],
    student: Student,
    reference: Reference,
    differs: Differs,
    limits: Budget,
    spent: Ledger | None = None,
) -> Found | None:
    """The smallest input found on which `student` and `reference` differ (`differs`),
    starting from the shapes of the failing call `args`/`kwargs` (their values are never
    used), within what is left of the question's budget (`spent`, updated); or None.

    `student(args, kwargs, cpu_seconds)` calls the student's function (None: it raised,
    died or returned something else than tensors of the reference's shapes);
    `reference(args, kwargs)` the reference (None, or `Refused`: it refuses these inputs;
    any other exception is the kit's and propagates)."""
    leaves = _leaves(args, kwargs)
    if leaves is None:
        return None
    strategy = FunctionStrategy(
        name, list(args), dict(kwargs), student, reference, differs, seed_of(limits.seed, name), leaves
    )
    return engine.search(name, strategy, limits, spent)

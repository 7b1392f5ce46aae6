"""The smallest input on which a student's function and the reference differ.

When a value check of a function question fails, the judge searches, in a budget
of its own (grading.yml `scoring.counterexample`: seconds and calls to the worker
per question), for a small concrete case to show the student: these inputs, your
output, the expected output. The search starts from the failing check's own
shapes and shrinks, as property-based testing tools do:

1. at the failing call's own shapes, fresh one-decimal numbers with a mask that
   hides one key, then one whose first row hides every key, then a random one;
   where the failing input holds large numbers (mean or spread above 10), small
   multiples of its spread around its mean (each to one significant digit: the
   scale, never the values), for the bugs that show only there;
2. fewest elements: every size of the failing call (an axis length shared by the
   inputs, or a size passed as a positional int, such as a number of heads) is
   tried smaller, from 1 up, each size variable in turn (the largest first),
   keeping the first that still shows a difference;
3. then the simplest values: small integers (-2 .. 2) where they still show it.

The inputs are always made fresh from a seed (never a hidden input: a candidate
equal to one of the failing check's own inputs is skipped, and values are drawn
anew at every size), so the expected output shown is the reference's on those
fresh inputs, never on a hidden one. The reference decides what a valid input is:
a candidate the reference refuses (it raises) costs no call to the worker; one
the student's function refuses, or answers with another shape, is not a
counterexample of a wrong value, and the search goes on.

A module question (a class the worker builds and loads parameters into) is
searched the same way by `search_module`: the suite makes a fresh case at given
named sizes from a seed (the module's arguments, its parameters, its inputs), the
student's module and the reference's get the same parameters, made simple with
the inputs, and `render_module` shows the module, its inputs, its parameters
(when small) and both outputs.

Only the search lives here: the hidden suites' value checks call `search` with
the student's function (a probe of the worker that never marks it dead), the
reference and the comparison, and `render` for the lines the feedback shows
(`checks.counterexample_on_failure`, `checks.module_counterexample_on_failure`).
A failed check hands its search to the judge, which runs it once every verdict
call of the submission is made (`KitPlugin.second_looks`, `Remote.end_verdicts`):
the search's inputs tell the student's code that it failed.
"""

import inspect
import itertools
import time
import weakref
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import torch

from autograder.messages import t

Outputs = dict[str, torch.Tensor]
Student = Callable[[list[Any], dict[str, Any], float], "Outputs | None"]
Reference = Callable[[list[Any], dict[str, Any]], "Outputs | None"]
Differs = Callable[[Outputs, Outputs], bool]

CALLS_PER_SIZE = 3  # student calls tried for one size variable in one pass (the reference's refusals are free)
PASSES = 3  # passes over the size variables (a pass with no change ends the search of sizes)


@dataclass(frozen=True)
class Budget:
    """grading.yml `scoring.counterexample` (each key optional): the search's budget per question."""

    seconds: float = 2.0  # wall clock of the search, per question
    calls: int = 30  # calls to the student's function in the worker, per question (0: no search)
    numbers: int = 12  # numbers shown per tensor
    decimals: int = 3  # shown rounded to this many decimals
    seed: int = 0  # the inputs are drawn from this seed (and the function's name)


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
class Found:
    """A counterexample: the inputs (as the reference's parameters take them), what the
    student's function returned and what the reference returns, on those inputs."""

    args: list[Any]
    kwargs: dict[str, Any]
    got: Outputs
    expected: Outputs
    calls: int = 0  # calls to the student's function this search made
    seconds: float = 0.0

    def largest(self) -> int:
        """Elements in the largest tensor shown (inputs and outputs)."""
        tensors = [v for v in [*self.args, *self.kwargs.values()] if isinstance(v, torch.Tensor)]
        tensors += [*self.got.values(), *self.expected.values()]
        return max((int(x.numel()) for x in tensors), default=0)


@dataclass
class Ledger:
    """What one question's searches spent, and whether one found its counterexample."""

    calls: int = 0
    seconds: float = 0.0
    found: bool = False
    templates: list[str] = field(default_factory=list)  # the failing calls already searched from


_LEDGERS: "weakref.WeakKeyDictionary[object, dict[str, Ledger]]" = weakref.WeakKeyDictionary()
STATS: list[dict[str, Any]] = []  # one record per search in this process (bench/counterexamples.py reads them)


def ledger(owner: object, question: str) -> Ledger:
    """The ledger of `question` for one submission (`owner`: its proxy to the worker)."""
    return _LEDGERS.setdefault(owner, {}).setdefault(question, Ledger())


class _Stop(Exception):
    """The budget is spent."""


# -- the inputs ---------------------------------------------------------------------
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


def _with_sums(sizes: dict[int, int], var: int, smaller: int) -> list[dict[int, int]]:
    """The sizes to try with `var` at `smaller`: alone, then with each size that is the sum
    of `var` and another (a concatenation's width, d_s + d_h) following it."""
    plain = {**sizes, var: smaller}
    out = [plain]
    for w in sizes:
        for u in sizes:
            if len({w, u, var}) == 3 and w == var + u:  # by their original values
                out.append({**plain, w: smaller + sizes[u]})
    return out


def _seed(*parts: object) -> int:
    return zlib.crc32(repr(parts).encode()) & 0x7FFFFFFF


def _make(
    leaves: Sequence[_Leaf], n_args: int, names: Sequence[str], sizes: dict[int, int], values: str, mask: str, seed: int
) -> tuple[list[Any], dict[str, Any]]:
    """Fresh inputs of the leaves' kinds at `sizes` ({original size: now}); `values`
    "integer" (-2 .. 2) or "decimal" (one decimal), `mask` "one_hidden" or "random"."""
    made: list[Any] = []
    for i, leaf in enumerate(leaves):
        shape = tuple(sizes.get(s, s) for s in leaf.shape)
        g = torch.Generator().manual_seed(_seed(seed, i, shape, values, mask))
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


def _equal_any(args: Sequence[Any], kwargs: dict[str, Any], sent: Sequence[torch.Tensor]) -> bool:
    """Whether any tensor input equals one of `sent` (the failing check's own inputs)."""
    for v in [*args, *kwargs.values()]:
        if isinstance(v, torch.Tensor) and v.numel():
            for s in sent:
                if s.shape == v.shape and s.dtype == v.dtype and torch.equal(s.detach().cpu(), v):
                    return True
    return False


# -- the search ---------------------------------------------------------------------
def _same_call(args: Sequence[Any], kwargs: dict[str, Any], sent: Sequence[torch.Tensor]) -> bool:
    """Whether every tensor input equals one of `sent` (a module's masks, lengths and tokens
    at small sizes can each equal a hidden one: its structure, not its data; never all of
    them with its float values)."""
    given = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)]
    return bool(given) and all(_equal_any([v], {}, sent) for v in given)


def _shrink(
    sizes: dict[Any, int],
    attempt: Callable[[dict[Any, int], str, int], "Found | None"],
    candidates: Callable[[dict[Any, int], Any, int], list[dict[Any, int]]],
    spent: Ledger,
) -> None:
    """From a difference found at `sizes`: fewest elements (each size variable smaller in
    turn, the largest first, then two at once), then the simplest values (small integers).
    `attempt(sizes, values, salt)` tries a fresh candidate ("same": the kind of values the
    difference was found with; "integer") and keeps each difference it finds as the
    search's best (every one found here is smaller or simpler than the one before);
    `candidates(sizes, var, smaller)` the sizes to try with `var` at `smaller` (with a size
    that follows it). Raises _Stop when the budget is spent."""
    for _ in range(PASSES):
        changed = False
        for var in sorted(sizes, key=lambda v: -sizes[v]):
            tries = 0
            for smaller in range(1, sizes[var]):
                if tries >= CALLS_PER_SIZE:
                    break
                found = None
                for candidate in candidates(sizes, var, smaller):
                    calls = spent.calls
                    found = attempt(candidate, "same", 0)
                    tries += spent.calls - calls
                    if found is not None or spent.calls > calls:  # a difference, or none where it ran
                        break
                if found is not None:
                    sizes, changed = candidate, True
                    break
        if not changed:
            break
    for v, w in itertools.combinations(sorted(sizes, key=lambda v: -sizes[v]), 2):  # two sizes at once
        tries = 0
        pairs = [(a, b) for a in range(1, min(sizes[v], 13)) for b in range(1, min(sizes[w], 13))]
        for a, b in sorted(pairs, key=lambda p: p[0] + p[1]):
            if tries >= CALLS_PER_SIZE:
                break
            calls = spent.calls
            found = attempt({**sizes, v: a, w: b}, "same", 0)
            tries += spent.calls - calls
            if found is not None:
                sizes = {**sizes, v: a, w: b}
                break
    for salt in (0, 1):
        if attempt(sizes, "integer", salt) is not None:
            return


def search(
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
    `reference(args, kwargs)` the reference (None: it refuses these inputs)."""
    spent = spent if spent is not None else Ledger()
    leaves = _leaves(args, kwargs)
    if leaves is None or limits.calls <= 0:
        return None
    names = list(kwargs)
    sent = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)]
    start = time.monotonic()
    seconds_left = limits.seconds - spent.seconds
    calls_at_start = spent.calls
    seed = _seed(limits.seed, name)
    best: Found | None = None

    def attempt(sizes: dict[int, int], values: str, mask: str, salt: int = 0) -> Found | None:
        a, k = _make(leaves, len(args), names, sizes, values, mask, seed + salt)
        if _equal_any(a, k, sent):
            return None
        expected = reference(a, k)
        if expected is None:
            return None
        left = seconds_left - (time.monotonic() - start)
        if spent.calls >= limits.calls or left <= 0:
            raise _Stop
        spent.calls += 1
        got = student(a, k, max(0.2, left))
        if got is None or not differs(got, expected):
            return None
        return Found(a, k, got, expected)

    def shrunk(at: dict[int, int], values: str, mask: str, salt: int) -> Found | None:
        nonlocal best
        found = attempt(at, values, mask, salt)
        best = found if found is not None else best
        return found

    sizes = {v: v for v in _variables(leaves)}
    try:
        masked = any(leaf.kind == "bool" for leaf in leaves)
        masks = (("one_hidden", 0), ("dead_row", 0), ("random", 0)) if masked else (("one_hidden", 0),)
        kinds = ["decimal"]
        if any(leaf.kind == "float" and (abs(leaf.center) > 10 or leaf.spread > 10) for leaf in leaves):
            kinds.append("scaled")  # large scores: a bug that shows only there (overflow, a finite fill)
        values, mask = "decimal", "one_hidden"
        for values in kinds:  # the failing call's own shapes, fresh values
            for mask, salt in masks:
                best = attempt(sizes, values, mask, salt)
                if best is not None:
                    break
            if best is not None:
                break
        if best is not None:
            _shrink(
                sizes,
                lambda at, kind, salt: shrunk(at, values if kind == "same" else kind, mask, salt),
                _with_sums,
                spent,
            )
    except _Stop:
        pass
    return _settle(best, spent, name, start, calls_at_start)


def _settle(best: Any, spent: Ledger, name: str, start: float, calls_at_start: int) -> Any:
    """A search's end, function or module: its time charged to the question's ledger, its
    figures kept for the bench (STATS), and `best` (None or the smallest case) returned."""
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


# -- modules ------------------------------------------------------------------------
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


def _simplified(x: Any, values: str) -> Any:
    """A float tensor's values made simple: one decimal ("decimal") or integers ("integer")
    (a zero stays a zero: padding and masked positions keep what the suite gave them)."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return x
    return x.double().round() if values == "integer" else x.double().round(decimals=1)


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
    seed)` makes a fresh case at other sizes (None: sizes the module does not take, such
    as D not divisible by n_heads; it costs no call); `student(case, cpu_seconds)` calls the
    student's module built as `case.construct` with `case.state` loaded (None: it raised or
    returned something else than tensors of the reference's shapes). Its parameters and
    float inputs are made simple (one decimal, then integers) and every size is shrunk in
    turn, as `search` does for a function; a case is skipped where a float tensor (an input
    or a parameter), or every input, equals one of `sent` (the failing case's inputs,
    parameters and expected outputs). A mask, the lengths or the tokens alone may: a
    causal mask of T positions is the same in every case of T positions."""
    spent = spent if spent is not None else Ledger()
    if limits.calls <= 0 or not sizes:
        return None
    start = time.monotonic()
    seconds_left = limits.seconds - spent.seconds
    calls_at_start = spent.calls
    seed = _seed(limits.seed, name)
    best: ModuleFound | None = None

    def attempt(at: dict[str, int], values: str, salt: int) -> ModuleFound | None:
        nonlocal best
        try:
            case = make(dict(at), seed + salt)
        except Exception:  # noqa: BLE001 - sizes the suite cannot make a case of: not a candidate
            case = None
        if case is None:
            return None
        state = {n: _simplified(v, values) for n, v in case.state.items()}
        a = [_simplified(v, values) for v in case.args]
        k = {n: _simplified(v, values) for n, v in case.kwargs.items()}
        floats = [
            v for v in [*a, *k.values(), *state.values()] if isinstance(v, torch.Tensor) and v.is_floating_point()
        ]
        if _equal_any(floats, {}, sent) or _same_call(a, k, sent):
            return None
        try:
            with torch.no_grad():
                out = list(case.reference(state, a, k))
        except Exception:  # noqa: BLE001 - the reference refuses these inputs: not a candidate
            return None
        if len(out) != len(out_names) or not all(isinstance(v, torch.Tensor) for v in out):
            return None
        expected = dict(zip(out_names, out))
        left = seconds_left - (time.monotonic() - start)
        if spent.calls >= limits.calls or left <= 0:
            raise _Stop
        spent.calls += 1
        made = ModuleCase(case.label, case.construct, state, a, k, case.arg_names, case.reference)
        got = student(made, max(0.2, left))
        if got is None or not differs(got, expected):
            return None
        best = ModuleFound(a, k, got, expected, label=case.label, state=state, arg_names=list(case.arg_names))
        return best

    def one_size(at: dict[str, int], var: str, smaller: int) -> list[dict[str, int]]:
        return [{**at, var: smaller}]

    try:
        if attempt(sizes, "decimal", 0) is not None or attempt(sizes, "decimal", 1) is not None:
            _shrink(
                dict(sizes),
                lambda at, kind, salt: attempt(at, "decimal" if kind == "same" else kind, salt),
                one_size,
                spent,
            )
    except _Stop:
        pass
    return _settle(best, spent, name, start, calls_at_start)


# -- what the student reads ---------------------------------------------------------
def _number(x: float | int | bool, decimals: int) -> str:
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{x:.0f}"
    return "0" if text in ("-0", "") else text


def show(x: Any, numbers: int = 12, decimals: int = 3) -> str:
    """A value as the student reads it: a tensor as nested lists of at most `numbers`
    numbers rounded to `decimals` (a longer one: its first numbers, how many more and its
    shape), never `tensor(...)`."""
    if not isinstance(x, torch.Tensor):
        return repr(x)
    x = x.detach().cpu()
    if x.dtype == torch.bool:
        flat: list[Any] = [bool(v) for v in x.reshape(-1).tolist()]
    elif x.is_floating_point():
        flat = [float(v) for v in x.double().reshape(-1).tolist()]
    else:
        flat = [int(v) for v in x.reshape(-1).tolist()]
    cells = [_number(v, decimals) for v in flat]
    if x.dim() == 0:
        return cells[0]
    if len(cells) > numbers:
        shape = "(" + ", ".join(str(s) for s in x.shape) + ")"
        more = t("counterexample_first", shown=numbers, total=len(cells), shape=shape)
        return "[" + ", ".join(cells[:numbers]) + ", ...] " + more

    def nest(items: list[str], shape: Sequence[int]) -> str:
        if len(shape) == 1:
            return "[" + ", ".join(items) + "]"
        step = len(items) // shape[0] if shape[0] else 0
        return "[" + ", ".join(nest(items[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"

    return nest(cells, list(x.shape))


def parameter_names(fn: Callable[..., Any], n: int) -> list[str]:
    """The names of `fn`'s first `n` positional parameters (arg1, arg2, ... where it has none)."""
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i + 1}" for i in range(n)]


def _outputs(found: Found, limits: Budget, kind: str = "") -> list[str]:
    """The student's outputs and the expected ones, to as many decimals as show where
    they differ (a rounding bug differs far below the third decimal), from the budget's
    decimals up to 12."""
    decimals = next(
        (
            d
            for d in range(limits.decimals, 13)
            if any(
                show(found.got[n], limits.numbers, d) != show(e, limits.numbers, d) for n, e in found.expected.items()
            )
        ),
        limits.decimals,
    )

    def outputs(values: Outputs) -> str:
        return ", ".join(f"{n}={show(v, limits.numbers, decimals)}" for n, v in values.items())

    yours, expected = (
        ("counterexample_gradient_yours", "counterexample_gradient_expected")
        if kind == "gradient"
        else (
            "counterexample_yours",
            "counterexample_expected",
        )
    )
    return [t(yours, outputs=outputs(found.got)), t(expected, outputs=outputs(found.expected))]


def _inputs(arg_names: Sequence[str], found: Found, limits: Budget) -> str:
    inputs = [f"{n}={show(v, limits.numbers, limits.decimals)}" for n, v in zip(arg_names, found.args)]
    inputs += [f"{n}={show(v, limits.numbers, limits.decimals)}" for n, v in found.kwargs.items()]
    return ", ".join(inputs)


def render(
    name: str, arg_names: Sequence[str], found: Found, limits: Budget, *, kind: str = "", dtype: str = ""
) -> list[str]:
    """The feedback's lines for a counterexample, in the language in force: the call with
    its inputs, the student's outputs, the expected outputs. `kind` "gradient": the
    outputs are the gradients of the sum of every output w.r.t. the inputs they name;
    `dtype` (not float64): the inputs were sent in that dtype (shown as they round to it)."""
    call = f"{name}({_inputs(arg_names, found, limits)})"
    if kind == "gradient":
        first = t("counterexample_gradient_input", call=call)
    elif dtype:
        first = t("counterexample_dtype_input", call=call, dtype=dtype)
    else:
        first = t("counterexample_input", call=call)
    return [first, *_outputs(found, limits, kind)]


def render_module(found: ModuleFound, limits: Budget) -> list[str]:
    """The feedback's lines for a module counterexample, in the language in force: the
    module built and called on its inputs, its parameters (each shown whole when every one
    has at most `numbers` numbers and they fit on a feedback line; else how many there
    are), the student's outputs, the expected outputs."""
    from autograder.judge.scoring import MAX_LINE_CHARS

    call = f"{found.label}({_inputs(found.arg_names, found, limits)})"
    shown = ", ".join(f"{n}={show(v, limits.numbers, limits.decimals)}" for n, v in found.state.items())
    params = t("counterexample_parameters", parameters=shown)
    if any(v.numel() > limits.numbers for v in found.state.values()) or len(params) > MAX_LINE_CHARS:
        total = sum(int(v.numel()) for v in found.state.values())
        params = t("counterexample_parameters_not_shown", n=total, tensors=len(found.state))
    return [t("counterexample_module_input", call=call), params, *_outputs(found, limits)]


# the first line of each kind of counterexample (the feedback's readers find them by it)
INPUT_KEYS = (
    "counterexample_input",
    "counterexample_module_input",
    "counterexample_gradient_input",
    "counterexample_dtype_input",
    "counterexample_train_input",
)


# -- reading the feedback back (the kit's tests and bench/counterexamples.py) -------
def is_input_line(line: str) -> bool:
    """Whether a feedback line is a counterexample's first line (its inputs), in any language."""
    from autograder.messages import LANGUAGES

    return any(
        line.startswith(t(key, lang, call="\0", dtype="\0", batches="\0").split("\0")[0])
        for lang in LANGUAGES
        for key in INPUT_KEYS
    )


def lines_shown(lines: Sequence[str]) -> list[str]:
    """A counterexample's lines in a question's feedback (from its first line to the
    expected outputs: 3 lines, 4 for a module's, with its parameters), or []."""
    from autograder.messages import LANGUAGES

    at = next((i for i, line in enumerate(lines) if is_input_line(line)), None)
    if at is None:
        return []
    expected = tuple(
        t(key, lang, outputs="\0").split("\0")[0]
        for lang in LANGUAGES
        for key in ("counterexample_expected", "counterexample_gradient_expected")
    )
    end = next((i for i in range(at, min(len(lines), at + 4)) if lines[i].startswith(expected)), at + 2)
    return list(lines[at : end + 1])


def sizes_shown(line: str) -> list[int]:
    """The number of elements of each value shown in a counterexample line (a tensor cut
    to its first numbers counts whole: the total its note gives), as `show` writes them."""
    import re

    body = line.split(": ", 1)[1] if ": " in line else line
    sizes: list[int] = []
    i, depth, count, start = 0, 0, 0, 0
    while i < len(body):
        ch = body[i]
        if ch == "[":
            if depth == 0:
                count, start = 0, i
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
            if depth == 0:
                inner = body[start:i]
                count = len(re.findall(r"-?(?:\d+(?:\.\d+)?|inf|nan)|True|False", inner))
                cut = re.match(r" \(\D*?(\d+)\D+?(\d+),", body[i + 1 :])
                sizes.append(int(cut.group(2)) if cut and ", ...]" in body[start : i + 1] else count)
        elif depth == 0 and ch == "=" and i + 1 < len(body) and body[i + 1] != "[":
            m = re.match(r"=(-?(?:\d+(?:\.\d+)?|inf|nan)|True|False)(?=[,)]|$)", body[i:])
            if m:
                sizes.append(1)
        i += 1
    return sizes


def is_value_failure(line: str, kind: str = "output") -> bool:
    """Whether a feedback line is the failure of a value comparison with the reference, in
    any language: what a counterexample is searched for. `kind` "output": a call's output
    (`FAIL test: f(...) -> out: 3 of 9 values differ ...`, or NaN where numbers were
    expected), outside the dtype check; "gradient": a function's gradient w.r.t. an input
    (`FAIL test_gradients: gradient of f(...) w.r.t. argument 2: ...`); "dtype": an output
    in the dtype check (values, or NaN or inf where the reference is finite)."""
    import re

    from autograder.judge.scoring import is_failure_line
    from autograder.messages import LANGUAGES

    if not is_failure_line(line):
        return False
    in_dtype = "test_dtype_and_device" in line
    gradient = any(t("gradient_wrt_argument", lang, what="\0", i="\0").split("\0")[1] in line for lang in LANGUAGES)
    if (kind == "dtype") != in_dtype or (kind == "gradient") != gradient:
        return False
    # the label before the first colon may name several checks (scoring: one line per kind of failure)
    if kind != "gradient" and not re.search(r"\) -> |^\S+ [^:]+: \w+\(.*\) \w+ .* -> \w+: ", line):
        return False  # f(...) -> out; Module(...) on ... -> out
    for lang in LANGUAGES:
        blank = dict.fromkeys(("n", "total", "err", "index", "dtype", "atol", "rtol"), "\0")
        differ = t("values_differ", lang, **blank).split("\0")[2].split(";")[0].strip()
        nan = t("nan_values", lang, n="\0", index="\0").split("\0")[1].split(",")[0].strip()
        nonfinite = t("nonfinite_in_dtype", lang, what="\0", n="\0", dtype="\0").split("\0")[2].strip()
        if differ in line or nan in line or (kind == "dtype" and nonfinite in line):
            return True
    return False

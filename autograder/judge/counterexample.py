"""What the student reads of a counterexample.

When a value check fails, the judge searches, in a budget of its own (grading.yml
`scoring.counterexample`: seconds and calls to the worker per question), for a small
concrete case to show the student: these inputs, your output, the expected output. The
search is one engine with a strategy per kind of question (`autograder.judge.shrink`);
this module renders what it found, in the language in force (`render`, `render_module`),
as a `Shown`: the feedback's lines with what they show as data (results.json's
`extra_data.feedback[].counterexample`, what the kit's tests and bench/counterexamples.py
read; never the lines back).

A failed check hands its search to the judge, which runs it once every verdict call of
the submission is made (`KitPlugin.second_looks`, `Remote.end_verdicts`): the search's
inputs tell the student's code that it failed.
"""

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autograder.judge.shrink import Budget, Found, ModuleFound, Outputs
from autograder.messages import t
from autograder.text import MAX_LINE_CHARS

# the kinds of counterexample, by the kind of search that found it
KINDS = ("function", "module", "gradient", "dtype", "train")


@dataclass(frozen=True)
class Shown:
    """A counterexample as the student reads it: `lines`, its feedback lines in the language
    in force (the call with its inputs, a module's parameters, the student's outputs, the
    expected outputs), and what they show as data: `kind` (`KINDS`) and `largest`, the most
    numbers one value shown holds (a tensor cut to its first numbers counts whole)."""

    lines: tuple[str, ...]
    kind: str
    largest: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS or not all(isinstance(line, str) for line in self.lines) or not self.lines:
            raise TypeError(f"Shown({self.lines!r}, {self.kind!r}): lines of text and a kind of {KINDS}")

    def as_data(self) -> dict[str, Any]:
        """Plain data for results.json (`extra_data.feedback[].counterexample`)."""
        return {"kind": self.kind, "lines": list(self.lines), "largest": self.largest}


def numbers_in(value: Any) -> int:
    """How many numbers a value shown holds (`show`): a tensor's elements, 1 for a number,
    0 for anything else."""
    if isinstance(value, torch.Tensor):
        return int(value.numel())
    return 1 if isinstance(value, (int, float)) else 0


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
) -> Shown:
    """A counterexample's feedback lines, in the language in force: the call with its
    inputs, the student's outputs, the expected outputs. `kind` "gradient": the outputs
    are the gradients of the sum of every output w.r.t. the inputs they name; `dtype` (not
    float64): the inputs were sent in that dtype (shown as they round to it)."""
    call = f"{name}({_inputs(arg_names, found, limits)})"
    if kind == "gradient":
        first = t("counterexample_gradient_input", call=call)
    elif dtype:
        first = t("counterexample_dtype_input", call=call, dtype=dtype)
    else:
        first = t("counterexample_input", call=call)
    values = [*found.args, *found.kwargs.values(), *found.got.values(), *found.expected.values()]
    shown = kind or ("dtype" if dtype else "function")
    return Shown((first, *_outputs(found, limits, kind)), shown, max(map(numbers_in, values), default=0))


def render_module(found: ModuleFound, limits: Budget) -> Shown:
    """A module counterexample's feedback lines, in the language in force: the module built
    and called on its inputs, its parameters (each shown whole when every one has at most
    `numbers` numbers and they fit on a feedback line; else how many there are), the
    student's outputs, the expected outputs."""
    call = f"{found.label}({_inputs(found.arg_names, found, limits)})"
    shown = ", ".join(f"{n}={show(v, limits.numbers, limits.decimals)}" for n, v in found.state.items())
    params = t("counterexample_parameters", parameters=shown)
    values = [*found.args, *found.kwargs.values(), *found.got.values(), *found.expected.values()]
    if any(v.numel() > limits.numbers for v in found.state.values()) or len(params) > MAX_LINE_CHARS:
        total = sum(int(v.numel()) for v in found.state.values())
        params = t("counterexample_parameters_not_shown", n=total, tensors=len(found.state))
    else:
        values += list(found.state.values())
    lines = (t("counterexample_module_input", call=call), params, *_outputs(found, limits))
    return Shown(lines, "module", max(map(numbers_in, values), default=0))

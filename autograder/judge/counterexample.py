"""What the student reads of a counterexample, and reading it back from the feedback.

When a value check fails, the judge searches, in a budget of its own (grading.yml
`scoring.counterexample`: seconds and calls to the worker per question), for a small
concrete case to show the student: these inputs, your output, the expected output. The
search is one engine with a strategy per kind of question (`autograder.judge.shrink`);
this module renders what it found, in the language in force (`render`, `render_module`),
and reads the feedback's lines back (the kit's tests and bench/counterexamples.py).

A failed check hands its search to the judge, which runs it once every verdict call of
the submission is made (`KitPlugin.second_looks`, `Remote.end_verdicts`): the search's
inputs tell the student's code that it failed.
"""

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch

from autograder.judge.shrink import Budget, Found, ModuleFound, Outputs
from autograder.messages import t


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

"""The by-hand answer cell: numbers a student typed, read as plain data, never run.

A question answered by hand (`by_hand`, in the assignment whose reference has
`BY_HAND`) has one code cell
holding only literal assignments:

    # kit-by-hand: numbers only (no code). ...
    scores = [0.5, -1.25, 2.0]
    weights = [..., ..., ...]
    output = [..., ...]

The cell is found by its tag `kit-by-hand` or, where a student's copy lost the
tag, by a line starting with the marker comment `# kit-by-hand`; provided cells
are never it. The rule: each statement is `NAME = VALUE` with NAME one of
`TARGETS`, each at most once, and VALUE a number (int or float, an optional
sign, finite), `...` (not answered yet), or a list or tuple of those, or of
such lists (two levels at most, `MAX_NUMBERS` items per list). Anything else
(a call, another name, an operator, a string, NaN or inf, an import, a cell
over `MAX_CHARS`) makes the whole answer unreadable, with a one-line reason
naming the rule (a key of messages/reader.yml and its fields). The cell still
runs in the worker like any other cell: it only assigns three names.

The same reader serves every question answered in a typed cell (a `Form`):
`BY_HAND` above (numbers) and the word forms an assignment declares (its
folder's `TYPED`, `autograder.declarations.typed_forms`: a drill's words from a
fixed vocabulary, `wrong_tensor = "..."`, `right_shape = ("...", ...)`, `fix =
"..."`), handed to this module as plain data (`Form.from_data`). A word answer
may hold only a string that is one of its target's words (or, for a shape, a
tuple or list of 1 to `MAX_SHAPE` symbols) or `...`; anything else is
unreadable with a one-line reason, as above. The vocabularies are public (the
names of a provided function, the contract's size symbols, the kinds of fix);
the answers live in the solutions.

Runs in the reader's limited helper (`reader.read_bytes`): standard library
only. `checked(data)` is the judge's side: it accepts what the helper sent
only in the shape `read` gives.
"""

import ast
import math
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

TAG = "kit-by-hand"
MARK = "# kit-by-hand"
QUESTION = "by_hand"  # the question a by-hand cell answers (what detection counts it as)
TARGETS = ("scores", "weights", "output")
MAX_CHARS = 4000  # the cell's text: three short lists and comments fit many times over
MAX_NUMBERS = 16  # items in one list
MAX_DEPTH = 2  # a list of numbers, or a list of such lists (one row: [[w1, w2, w3]])
NAME_CHARS = 40
MAX_SHAPE = 4  # symbols in a typed shape: (batch_size, T_dec, T_enc) needs 3
WORD_CHARS = 40  # of a word the student typed, in a reason


@dataclass(frozen=True)
class Form:
    """One question answered in a typed cell: its tag (the marker is `# ` + tag), the
    names the cell may assign and, for a word answer, {target: allowed words} (the
    `shape` target holds a tuple of them). `words` None: numbers (the by-hand rule)."""

    question: str
    tag: str
    targets: tuple[str, ...]
    words: dict[str, tuple[str, ...]] | None = field(default=None, hash=False, compare=False)
    shape: str | None = None

    @property
    def mark(self) -> str:
        return "# " + self.tag

    @classmethod
    def from_data(cls, question: str, data: dict[str, Any]) -> "Form":
        """A word form from its declaration's plain data ({"tag", "targets", "words", "shape"})."""
        words = {str(k): tuple(str(w) for w in v) for k, v in data["words"].items()}
        return cls(question, str(data["tag"]), tuple(str(t) for t in data["targets"]), words, data.get("shape"))

    def key(self, rule: str) -> str:
        """The reason's key (messages/reader.yml): a word form's own wording where it differs."""
        return f"by_hand_word_{rule}" if self.words is not None and rule in WORD_RULES else f"by_hand_{rule}"


WORD_RULES = ("two_cells", "statement", "target", "name", "string", "operator", "not_number", "too_big")
BY_HAND = Form(QUESTION, TAG, TARGETS)


def forms(typed: dict[str, dict[str, Any]] | None = None) -> tuple[Form, ...]:
    """Every typed-answer form: `BY_HAND` and the word forms in `typed` ({question: plain
    data}, what the assignments declare: `autograder.declarations.typed_forms`)."""
    return (BY_HAND, *(Form.from_data(q, d) for q, d in sorted((typed or {}).items())))


class Unreadable(Exception):
    """The cell breaks the rule: `key` (messages/reader.yml) and its plain fields."""

    def __init__(self, key: str, **fields: object) -> None:
        super().__init__(key)
        self.key, self.fields = key, fields


def is_marked(cell_text: str, tags: Container[str], form: Form = BY_HAND) -> bool:
    """Whether a code cell is `form`'s answer cell: its tag, or a line starting with its marker."""
    return form.tag in tags or any(line.lstrip().startswith(form.mark) for line in cell_text.split("\n"))


def _name(node: ast.Name | ast.Attribute) -> str:
    return node.id[:NAME_CHARS] if isinstance(node, ast.Name) else node.attr[:NAME_CHARS]


def _number(node: ast.expr, line: int) -> float:
    """The float a literal number node holds (an optional sign), or Unreadable."""
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        try:
            x = sign * float(node.value)  # type: ignore[arg-type]  # an int or a float: `type` says so above
        except OverflowError:
            x = math.inf
        if not math.isfinite(x):
            raise Unreadable("by_hand_not_finite", line=line)
        return x
    raise _offence(node, line)


def _offence(node: ast.expr, line: int, form: Form = BY_HAND) -> Unreadable:
    """Why `node` is not a literal number (a word, for a word form): the rule it breaks."""
    if any(isinstance(n, ast.Call) for n in ast.walk(node)):
        return Unreadable("by_hand_call", line=line)
    names = [n for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))]
    if names:
        return Unreadable(form.key("name"), line=line, name=_name(names[0]))
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) or isinstance(node, ast.JoinedStr):
        return Unreadable(form.key("string"), line=line)
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
        return Unreadable(form.key("operator"), line=line)
    return Unreadable(form.key("not_number"), line=line)


def _shown(text: str) -> str:
    """A word the student typed, as a reason may show it: short, printable."""
    return "".join(ch if ch.isprintable() else "?" for ch in text[:WORD_CHARS])


def _word(node: ast.expr, line: int, form: Form, name: str) -> str:
    """The string `node` holds if it is one of `name`'s words, or Unreadable."""
    assert form.words is not None  # a word form
    allowed = form.words[name]
    if isinstance(node, ast.Constant) and type(node.value) is str:
        if node.value in allowed:
            return node.value
        raise Unreadable(
            "by_hand_word_unknown", line=line, name=name, word=_shown(node.value), allowed=", ".join(allowed)
        )
    raise _offence(node, line, form)


def _word_value(node: ast.expr, line: int, form: Form, name: str) -> str | list[str] | None:
    """A word answer as plain data: a word, None (`...`), or (the shape) a list of words."""
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return None
    if name != form.shape:
        if isinstance(node, (ast.List, ast.Tuple)):
            raise Unreadable("by_hand_word_one", line=line, name=name)
        return _word(node, line, form, name)
    if not isinstance(node, (ast.List, ast.Tuple)) or not 1 <= len(node.elts) <= MAX_SHAPE:
        n = len(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else 1
        raise Unreadable("by_hand_word_shape", line=line, name=name, n=n, limit=MAX_SHAPE)
    return [_word(e, line, form, name) for e in node.elts]


def _value(node: ast.expr, line: int, depth: int = 0) -> float | list[Any] | None:
    """A literal value as plain data: float, None (`...`), or lists of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        if depth >= MAX_DEPTH:
            raise Unreadable("by_hand_too_deep", line=line, depth=MAX_DEPTH)
        if len(node.elts) > MAX_NUMBERS:
            raise Unreadable("by_hand_too_many", line=line, n=len(node.elts), limit=MAX_NUMBERS)
        return [_value(e, line, depth + 1) for e in node.elts]
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return None
    return _number(node, line)


def parse_cell(text: str, form: Form = BY_HAND) -> dict[str, Any]:
    """{target: value or None} from the cell's text, or Unreadable."""
    if len(text) > MAX_CHARS:
        raise Unreadable(form.key("too_big"), chars=len(text), limit=MAX_CHARS)
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise Unreadable("by_hand_syntax", line=exc.lineno or 0, why=str(exc.msg)[:80]) from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise Unreadable("by_hand_syntax", line=0, why="nested too deeply") from None
    answers: dict[str, Any] = {name: None for name in form.targets}
    seen: set[str] = set()
    for stmt in tree.body:
        line = stmt.lineno
        if not isinstance(stmt, ast.Assign):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                raise Unreadable("by_hand_call", line=line)
            raise Unreadable(form.key("statement"), line=line)
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            raise Unreadable(form.key("statement"), line=line)
        name = stmt.targets[0].id
        if name not in form.targets:
            fields = {"allowed": ", ".join(form.targets)} if form.words is not None else {}
            raise Unreadable(form.key("target"), line=line, name=name[:NAME_CHARS], **fields)
        if name in seen:
            raise Unreadable("by_hand_twice", line=line, name=name)
        seen.add(name)
        answers[name] = _value(stmt.value, line) if form.words is None else _word_value(stmt.value, line, form, name)
    return answers


MAX_LISTED = 20  # marked cells named in the answer (the rest are only counted)


def read(
    cells: Sequence[tuple[int, str, str]], total: int | None = None, form: Form = BY_HAND
) -> dict[str, Any] | None:
    """The by-hand answer from [(index, label, text)] of the marked cells (the first
    MAX_LISTED of `total`), as plain data: None when there is none, else {"cells":
    [index], "labels": [label], "answers": {target: value} or None, "problem": {"key",
    "fields"} or None}."""
    if not cells:
        return None
    total = max(total or 0, len(cells))
    out: dict[str, Any] = {
        "cells": [i for i, _, _ in cells],
        "labels": [label for _, label, _ in cells],
        "answers": None,
        "problem": None,
    }
    if total > 1:
        fields = {"n": total, "tag": form.tag} if form.words is not None else {"n": total}
        out["problem"] = {"key": form.key("two_cells"), "fields": fields}
        return out
    try:
        out["answers"] = parse_cell(cells[0][2], form)
    except Unreadable as exc:
        out["problem"] = {"key": exc.key, "fields": exc.fields}
    return out


# -- the judge's side: what the helper sent, checked for shape -----------------------
def _is_value(v: object, depth: int = 0) -> bool:
    if v is None:
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, int) and not isinstance(v, bool):  # JSON writes 2.0 as 2.0; an int is still a number
        return abs(v) < 2**53
    return (
        isinstance(v, list) and depth < MAX_DEPTH and len(v) <= MAX_NUMBERS and all(_is_value(x, depth + 1) for x in v)
    )


def _to_float(v: Any) -> float | list[Any] | None:  # JSON: a number, None or lists of them
    return None if v is None else [_to_float(x) for x in v] if isinstance(v, list) else float(v)


def _is_word_value(v: object, form: Form, name: str) -> bool:
    if v is None:
        return True
    assert form.words is not None  # a word form
    allowed = form.words[name]
    if name == form.shape:
        return isinstance(v, list) and 1 <= len(v) <= MAX_SHAPE and all(isinstance(x, str) and x in allowed for x in v)
    return isinstance(v, str) and v in allowed


def checked(data: Any, max_cells: int, form: Form = BY_HAND) -> dict[str, Any] | None:
    """`data` as the judge keeps it (values as floats) if it has the shape `read` gives;
    ValueError otherwise. A problem's key must be one of messages/reader.yml's."""
    from autograder.messages import catalog

    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"cells", "labels", "answers", "problem"}:
        raise ValueError("keys")
    from autograder.judge.form import LABEL_CHARS  # here, not at the top: this module's source runs in notebooks

    cells, labels = data["cells"], data["labels"]
    if not (
        isinstance(cells, list)
        and 1 <= len(cells) <= max_cells
        and all(type(i) is int and 0 < i for i in cells)
        and isinstance(labels, list)
        and len(labels) == len(cells)
        and all(x is None or (isinstance(x, str) and len(x) <= LABEL_CHARS) for x in labels)
    ):
        raise ValueError("cells")
    answers, problem = data["answers"], data["problem"]
    if (answers is None) == (problem is None):
        raise ValueError("answers or problem")
    if answers is not None:
        if not (isinstance(answers, dict) and set(answers) == set(form.targets)):
            raise ValueError("answers")
        if form.words is None:
            if not all(_is_value(v) for v in answers.values()):
                raise ValueError("answers")
            answers = {k: _to_float(v) for k, v in answers.items()}
        elif not all(_is_word_value(v, form, k) for k, v in answers.items()):
            raise ValueError("answers")
    if problem is not None:
        fields = problem.get("fields") if isinstance(problem, dict) else None
        if not (
            isinstance(problem.get("key") if isinstance(problem, dict) else None, str)
            and problem["key"].startswith("by_hand_")
            and problem["key"] in catalog()
            and isinstance(fields, dict)
            and all(
                isinstance(k, str) and (isinstance(v, str) and len(v) <= 100 or type(v) is int)
                for k, v in fields.items()
            )
        ):
            raise ValueError("problem")
    return {"cells": cells, "labels": labels, "answers": answers, "problem": problem}


def checked_typed(data: Any, max_cells: int, typed: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The reader's `typed` answers ({question: what `read` gives} for the word forms of
    `typed`, as `forms` takes it) checked for shape; ValueError otherwise."""
    if data is None:
        return {}
    others = {f.question: f for f in forms(typed) if f is not BY_HAND}
    if not isinstance(data, dict) or not set(data) <= set(others):
        raise ValueError("typed")
    return {q: checked(v, max_cells, others[q]) for q, v in data.items()}

"""Which assignment a submission is for: from what its code defines, metadata only to break a tie.

A notebook's metadata (otter's `assignment_name`, the `otter.Notebook(...)`
init cell) is the student's to edit, so it never decides on its own: the
content does. Each assignment's graded functions and classes are the top-level
definitions of its reference module, `autograder.private.solutions.<name>`
(read as source, never imported: no torch import for this), named by the same
rule as `autograder.build.sync.question_name` (a function's name, a class's in
snake case). A submission is for the assignment whose graded names it defines
the largest share of; where two share the top, the metadata decides between
them, and where it names neither the submission is ambiguous (None).

`batch_assignment` picks one assignment for a whole batch (the majority of its
submissions), so a student cannot choose what their notebook is graded as by
adding another assignment's functions or editing its metadata: every
submission of a batch is graded against the batch's assignment.

Runs in the trusted judge; reads source text with `ast`, executes nothing.
"""

import ast
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from autograder import layout

if TYPE_CHECKING:
    from autograder.config import Config
    from autograder.judge.notebook import Submission

_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)


def question_name(obj_name: str) -> str:
    """The grading.yml question of a graded function or class: the function's name,
    or the class's in snake case (`MultiHeadAttention` -> `multi_head_attention`).
    The build (`autograder.build.sync.question_name`) uses this rule too."""
    if obj_name[:1].isupper():
        return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", obj_name).lower()
    return obj_name


@cache
def _reference_defs(assignment: str) -> tuple[str, ...]:
    """Top-level function and class names of the assignment's reference module
    (what it imports, such as provided functions, is not defined there)."""
    try:
        tree = ast.parse((layout.SOLUTIONS / f"{assignment}.py").read_text())
    except (OSError, SyntaxError, ValueError):
        return ()
    return tuple(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))


@cache
def runs(assignment: str) -> dict[str, tuple[str, ...]]:
    """{question: names of the graded parts it runs}: the reference module's literal `RUNS`
    (a question with no definition of its own, such as the training lab's run)."""
    try:
        tree = ast.parse((layout.SOLUTIONS / f"{assignment}.py").read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "RUNS" for t in node.targets):
            return {q: tuple(v) for q, v in ast.literal_eval(node.value).items()}
    return {}


def graded_names(assignment: str, cfg: "Config") -> dict[str, str]:
    """{name a submission defines: question} for the assignment's graded functions and classes
    (a question in `runs` is defined by no name of its own)."""
    questions = {q: p for q, p in cfg.questions(assignment).items() if q not in runs(assignment)}
    names = {n: question_name(n) for n in _reference_defs(assignment) if question_name(n) in questions}
    for q in questions:  # a question the reference module does not show (no module here): its own name
        if q not in names.values():
            names[q] = q
    return names


def defined_names(submission: "Submission") -> set[str]:
    """Names the submission's graded cells define at top level (def, class, or a plain assignment):
    what the reader found (`Submission.defined`), else read from its cells here."""
    defined = getattr(submission, "defined", None)
    if defined is not None:
        return set(defined)
    found: set[str] = set()
    for cell in getattr(submission, "cells", ()) or ():
        src = getattr(cell, "source", "")
        if not isinstance(src, str):
            continue
        try:
            body = ast.parse(src).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            found.update(_DEF.findall(src))  # a cell that does not parse: its def lines still tell
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def _is_stub(node: ast.stmt) -> bool:
    """A graded definition as the template gives it: each function's body (past its docstring
    and a super().__init__()) is one `raise NotImplementedError`; a class's methods all so."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return bool(methods) and all(_is_stub(m) for m in methods)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if body and isinstance(body[0], ast.Expr) and "super().__init__(" in ast.unparse(body[0]):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def untouched(submission: "Submission", assignment: str, cfg: "Config") -> bool:
    """Whether every graded function or class the submission defines is still the template's
    stub (and it defines at least one): the template handed in as it came."""
    names = graded_names(assignment, cfg)
    seen: list[bool] = []
    for cell in getattr(submission, "cells", ()) or ():
        try:
            body = ast.parse(getattr(cell, "source", "") or "").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False  # code that does not parse is the student's own
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
                seen.append(_is_stub(node))
    return bool(seen) and all(seen)


def content_scores(submission: "Submission", cfg: "Config") -> dict[str, float]:
    """{assignment: share of its graded names the submission defines}, for every known assignment."""
    defined = defined_names(submission)
    out: dict[str, float] = {}
    for a in cfg.assignments:
        names = graded_names(a, cfg)
        questions = set(names.values())
        hit = {names[n] for n in defined if n in names}
        out[a] = len(hit) / len(questions) if questions else 0.0
    return out


def from_content(submission: "Submission", cfg: "Config", tie_breaker: str | None = None) -> str | None:
    """The assignment the submission's code is for, or None (no graded name, or a tie the
    tie-breaker does not settle)."""
    scores = content_scores(submission, cfg)
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return None
    top = [a for a, s in scores.items() if s == best]
    if len(top) == 1:
        return top[0]
    return tie_breaker if tie_breaker in top else None


def metadata(submission: "Submission", cfg: "Config") -> str | None:
    """The assignment the notebook's metadata names, if it is a known one."""
    name = getattr(submission, "assignment", None)
    return name if name in cfg.assignments else None


def detect(submission: "Submission", cfg: "Config") -> str | None:
    """The assignment a submission is for: its content first (metadata only breaks a tie
    between assignments its code fits equally), then its metadata; None when neither tells."""
    meta = metadata(submission, cfg)
    scores = content_scores(submission, cfg)
    if max(scores.values(), default=0.0) > 0:
        return from_content(submission, cfg, tie_breaker=meta)
    return meta


def batch_assignment(submissions_detected: Iterable[str | None], order: Sequence[str] = ()) -> str | None:
    """The one assignment of a batch: the most common of its submissions' detected
    assignments (None ignored). A tie goes to the first of `order` (grading.yml's order),
    then to the name that sorts first. None when no submission was detected."""
    counts = Counter(a for a in submissions_detected if a)
    if not counts:
        return None
    best = max(counts.values())
    top = [a for a, n in counts.items() if n == best]
    ranked = [a for a in order if a in top] + sorted(a for a in top if a not in order)
    return ranked[0]


def is_tie(submissions_detected: Iterable[str | None]) -> bool:
    """Whether the batch's majority is shared by two or more assignments."""
    counts = Counter(a for a in submissions_detected if a)
    return bool(counts) and sum(n == max(counts.values()) for n in counts.values()) > 1

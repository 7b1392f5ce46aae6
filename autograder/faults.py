"""Whose error it is, typed where it is raised: the student's, or the kit's own.

The student's errors are two kinds: what the student's code raised, as the worker
reports it (`judge.remote.Reply.error`), and a refusal the judge makes of the student's
input. The second is `Refused`, made in one place (`contract`): around a call of a
trusted function (the reference, a broken variant of the kit's) on inputs the student's
code chose. Every other error raised in the judge (its stand-in plumbing, a suite
helper, the reference on the judge's own inputs, a message, the machine) is the kit's:
it is never caught into a student's verdict, and the judge reports it as `internal_error`
(exit status 3) with its file and error for the staff. `KitFault` is the kit's own error
where the kit raises one itself (a worker that cannot be confined: `Unconfined`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from autograder.text import one_line


class KitFault(Exception):
    """An error of the kit's own (its code, its settings, the grading machine): never the student's."""


class Unconfined(KitFault):
    """A worker whose confinement failed before any student code ran (`sandbox.confine`):
    the grading machine's fault; `step` names the step and its errno."""

    def __init__(self, step: str) -> None:
        super().__init__(f"the worker could not be confined: {step} (the grading machine's fault; no student code ran)")
        self.step = step


class Refused(Exception):
    """A trusted function refused the inputs the student's code chose: the student's
    error; `line()` is what the student reads (the error's type and message, one line)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error

    def line(self) -> str:
        return one_line(str(self), 300)


# What torch and the references raise on inputs off their contract: a shape, dtype or
# device torch will not combine (RuntimeError, IndexError for a dimension out of range), a
# reference's own check (ValueError), a call that does not bind or a value of the wrong
# type (TypeError). NotImplementedError (a RuntimeError) is a kernel the judge lacks, the
# kit's; so is anything else (NameError, KeyError, AssertionError...): the kit's own code.
REFUSALS = (RuntimeError, IndexError, ValueError, TypeError)
NOT_REFUSALS = (NotImplementedError, RecursionError)


def refusal(exc: BaseException, inputs: Any) -> bool:
    """Whether `exc`, raised by a trusted function run on `inputs` (what the student's code
    sent: nested lists, tuples and dicts of values), is that function refusing them: one of
    REFUSALS, or an attribute looked up on one of the inputs themselves (a list sent where a
    tensor goes: `lengths.max()`)."""
    if isinstance(exc, NOT_REFUSALS):
        return False
    if isinstance(exc, REFUSALS):
        return True
    return isinstance(exc, AttributeError) and any(exc.obj is v for v in _values(inputs))


def _values(inputs: Any) -> Iterator[Any]:
    todo = [inputs]
    while todo:
        v = todo.pop()
        yield v
        if isinstance(v, (list, tuple)):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.values())


@contextmanager
def contract(*inputs: Any) -> Iterator[None]:
    """Around a trusted function's call on the student's `inputs`: an error that refuses
    them (`refusal`) leaves as `Refused`, the student's; any other leaves as it came, the kit's."""
    try:
        yield
    except Exception as exc:
        if not refusal(exc, inputs):
            raise
        raise Refused(exc) from exc

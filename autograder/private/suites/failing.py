"""How a check fails: `fail(symptom, cause)` raises the judge's `Failure`; `caused` puts a
likely cause (a `Msg`) beside a symptom's words; `fail_form` for a typed answer's form;
`explain_errors` and `fail_explained` for a likely cause found by a second look.

A symptom says what was checked and what came back against what was expected (shapes,
dtypes, devices, the max abs error and its index), never the hidden inputs or the expected
tensors. Its words come from the message catalog (`t(key, ...)`) in the language in force
when the check fails; a likely cause stays data, `Msg(key, **fields)`, that the judge renders
where it is shown and a class report counts by key.
"""

import contextlib

from autograder.judge.failure import Failure, Said
from autograder.private.suites import causes


def fail(symptom, cause=None, form=False, compared=""):
    """Fail the check: `symptom` is its words or a `Said` (`caused`), `cause` a `Msg` or None;
    `compared`: what a value comparison with the reference found wrong (`Failure.compared`)."""
    if isinstance(symptom, Said):
        if cause is not None:
            raise TypeError(symptom, cause)  # a Said holds its cause already
        symptom, cause = symptom.symptom, symptom.cause
    raise Failure(symptom, cause, form=form, compared=compared)


def fail_form(message):
    """A typed answer that is missing, cannot be read or is not complete: about its form, never
    whether it is right, so a student reads it even where the course holds back which answers
    are wrong until the deadline (`autograder.release`)."""
    fail(message, form=True)


def caused(symptom, cause, sep=" "):
    """`symptom` (its words) with its likely cause (a `Msg`, or None: just the symptom), for
    `fail`; `sep` ends the symptom where a cause follows it ("Likely cause: ..." once rendered)."""
    if isinstance(symptom, Said):  # a symptom that has its cause already keeps it
        return symptom
    return Said(f"{symptom}{sep}", cause) if cause is not None else symptom


@contextlib.contextmanager
def explain_errors(cause):
    """Inside: a failure that reports an error raised by the student's code,
    with no likely cause or only a weak one read from the error line alone
    (WEAK_CAUSES), takes `cause()`'s (None: the message stays). `cause()` is a second look
    (`fail_explained`): it runs after the submission's last verdict call."""
    try:
        yield
    except Failure as exc:
        symptom = exc.symptom
        if exc.raised is None or (exc.cause is not None and not causes.is_weak(exc.cause)):
            raise
        inner = exc.explain  # a narrower explain_errors' look, tried first

        def explain():
            why = cause()
            if not why:
                return None
            return caused(f"{symptom.rstrip().rstrip('.')}.", why)

        exc.explain = explain if inner is None else (lambda: inner() or explain())
        raise


def fail_explained(message, explain):
    """Fail with `message`; `explain()` returns a `Said` with a likely cause, or None. A cause
    that calls the student's code again (`sub.probe`) is a second look: it runs once every
    verdict call of the submission is made (`KitPlugin.second_looks`), so that what it
    tells the student's code reaches no score."""
    exc = Failure(message)
    exc.explain = explain
    raise exc

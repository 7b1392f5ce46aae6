"""A failed check as data: its symptom, its likely cause as a message key with its
fields, and where the suites found one, a counterexample.

A hidden suite fails a check by raising `Failure` (the suites' `failing.fail`); the
judge's `KitPlugin` records its parts, never a text to split; scoring and every page
a person reads render the cause from its key, in the language each page is written
in, and a class report counts causes by key. Any other exception a check raises is
the kit's own fault.

`Msg` is never text: formatting one into a string raises, so a cause cannot be
folded into a sentence where only its words would survive.
"""

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from autograder.messages import t


class Msg:
    """A catalog message not yet rendered: its key and fields (a field may be a `Msg`)."""

    __slots__ = ("fields", "key")

    def __init__(self, key: str, **fields: Any) -> None:
        self.key = key
        self.fields: Mapping[str, Any] = fields

    def render(self, lang: str | None = None) -> str:
        """The words, in `lang` (default: the language in force)."""
        return t(self.key, lang, **{k: v.render(lang) if isinstance(v, Msg) else v for k, v in self.fields.items()})

    def field_texts(self, lang: str | None = None) -> dict[str, str]:
        """Each field as the rendered message shows it (results.json's `causes[].fields`)."""
        return {k: v.render(lang) if isinstance(v, Msg) else str(v) for k, v in self.fields.items()}

    def field_msgs(self) -> dict[str, dict[str, Any]]:
        """Each field that is itself a message, as data: {name: {"key", "fields"}} (nested the
        same way; results.json's `causes[].field_msgs`), so a page in another language words
        it again from its key, never from its words."""
        return {k: v.as_data() for k, v in self.fields.items() if isinstance(v, Msg)}

    def as_data(self) -> dict[str, Any]:
        """This message as plain data: its key and fields, as `field_texts` shows them (a field
        that is a message, nested)."""
        return {
            "key": self.key,
            "fields": {k: v.as_data() if isinstance(v, Msg) else str(v) for k, v in self.fields.items()},
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and (self.key, dict(self.fields)) == (other.key, dict(other.fields))

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Msg({self.key!r}, {dict(self.fields)!r})"

    def __str__(self) -> str:
        raise TypeError(f"{self!r} is data: render it where it is shown (Msg.render), never inside another text")

    __format__ = __str__  # type: ignore[assignment]  # f"{msg}" is the same mistake as str(msg)


class Said:
    """A symptom with its likely cause, before it is raised (`failing.caused`): `symptom` is
    the words up to where the cause would start (`sep` included), `cause` a `Msg` or None."""

    __slots__ = ("cause", "symptom")

    def __init__(self, symptom: str, cause: "Msg | None") -> None:
        if not isinstance(symptom, str) or (cause is not None and not isinstance(cause, Msg)):
            raise TypeError(f"Said({symptom!r}, {cause!r}): a symptom's text and a cause's Msg")
        self.symptom = symptom
        self.cause = cause

    def __str__(self) -> str:
        raise TypeError(f"Said({self.symptom!r}, {self.cause!r}): fail with it; its cause is never text")

    __format__ = __str__  # type: ignore[assignment]


def full_text(symptom: str, cause: Msg | None, lang: str | None = None) -> str:
    """A failure in one line: the symptom, then "Likely cause: ..." (how a typed answer's
    form failure and pytest's own report show it)."""
    return f"{symptom}{t('cause_marker', lang)} {cause.render(lang)}" if cause is not None else symptom


# what a value comparison with the reference compares (`Failure.compared`)
COMPARED = ("output", "gradient", "dtype")


class Failure(pytest.fail.Exception):  # type: ignore[name-defined]  # pytest's Failed: a failed test, not an error
    """A check that failed because of the student's code. `symptom`: its words (text up to the
        cause, `Said.symptom`); `cause`: a `Msg` or None; `form`: about a typed answer's form
        (`failing.fail_form`); `kind`: what makes failures one line of the feedback whatever their
    inputs (`calls.call_failed`: the error the call raised), else its symptom; `raised`: the type's
    name of the exception the student's code raised that the failure reports (`Reply.raised`), or
    None; `compared`: what of the student's code a comparison with the reference found wrong
    (`COMPARED`: a call's outputs, its gradients w.r.t. its inputs, its outputs in a lower
    precision; the suites' `value_checks`), or "": what a counterexample is searched for;
    `explain`: a second look that returns a `Said` with a cause (or None); `counterexample`,
    where a suite sets it: a second look that finds one (`counterexample.Shown`), or None
    (nothing to search for)."""

    def __init__(
        self,
        symptom: str,
        cause: Msg | None = None,
        form: bool = False,
        kind: str = "",
        raised: str | None = None,
        compared: str = "",
    ) -> None:
        said = Said(symptom, cause)  # checks the parts' types
        if compared and compared not in COMPARED:
            raise TypeError(f"compared={compared!r}: one of {COMPARED}")
        super().__init__(full_text(said.symptom, said.cause), pytrace=False)
        self.symptom = said.symptom
        self.cause = said.cause
        self.form = form
        self.kind = kind
        self.raised = raised
        self.compared = compared
        self.explain: Callable[[], Said | None] | None = None

    def again(self) -> "Failure":
        """A fresh exception with the same words and cause (a failure kept and raised again for
        each check that reads it); its second looks stay with the check that found it."""
        return Failure(self.symptom, self.cause, self.form, self.kind, self.raised, self.compared)

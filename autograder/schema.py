"""The one schema of grading.yml: every key the kit reads, its type, range and unit.

`config` checks the kit's packaged file and every course's own file (merged over it) against
`GRADING` before anything is graded, so a typo (`output_byte`), a word where a number goes
(`output_bytes: "1MB"`) or a number out of range is one line naming the file and the key,
never a quiet default or a failure later in a worker. The values themselves live in the
packaged grading.yml only (the kit's defaults); this module says what a value may be.

A spec is a small object with `check(value, key)` that raises `Invalid(key, what, value)`:
`Int`, `Number`, `Bool`, `Text`, `Choice`, `ListOf`, `Section` (known keys, each with its
spec, or any key whose name passes a test, for tables such as `questions`). A section's
`rules` check what crosses keys (a d_model the heads divide). A new setting is one line
here; its validation is then the same everywhere it is read. An assignment's own settings
(its run in the grader, `assignments.<name>.run`) are checked by the schema its declaration
holds (`autograder.declarations`), never named here.
"""

import difflib
import keyword
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autograder import release


class Invalid(Exception):
    """A value the schema refuses: its dotted key, what it must be, what it was."""

    def __init__(self, key: str, what: str, value: Any = None, shown: bool = True) -> None:
        self.key, self.what, self.value, self.shown = key, what, value, shown
        super().__init__(self.line())

    def line(self) -> str:
        got = f" (got {_shown(self.value)})" if self.shown else ""
        return f"{self.key or 'the file'} {self.what}{got}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _join(key: str, name: Any) -> str:
    return f"{key}.{name}" if key else str(name)


def _yaml_text_hint(value: Any) -> str:
    """Why a number came as text: YAML reads 1e-5 (no dot) as a string."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return ""
        if "e" in value.lower() and not math.isnan(number):
            return f"; YAML reads {value} as text, write {number:.1e}"
    return ""


class Spec:
    def check(self, value: Any, key: str) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Number(Spec):
    """A finite number (an int or a float, never a bool, never NaN or infinity, never an int
    too large for a float: the judge computes with each as a float), within [least, most];
    `above` makes `least` strict. `unit` names what it counts, for the message."""

    least: float | None = None
    most: float | None = None
    above: bool = False
    unit: str = ""
    integer: bool = False

    def check(self, value: Any, key: str) -> None:
        kinds: tuple[type, ...] = (int,) if self.integer else (int, float)
        ok = isinstance(value, kinds) and not isinstance(value, bool) and _finite(value)
        if ok and self.least is not None:
            ok = value > self.least if self.above else value >= self.least
        if ok and self.most is not None:
            ok = value <= self.most
        if not ok:
            raise Invalid(key, f"must be {self.describe()}{_yaml_text_hint(value)}", value)

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.unit:
            kind += f" of {self.unit}"
        if self.least is not None and self.most is not None:
            if self.above:
                return f"{kind} above {_plain(self.least)} and at most {_plain(self.most)}"
            return f"{kind} from {_plain(self.least)} to {_plain(self.most)}"
        if self.most is not None:
            return f"{kind} at most {_plain(self.most)}"
        if self.least is not None:
            return f"{kind} {'>' if self.above else '>='} {_plain(self.least)}"
        return kind


def _plain(number: float) -> str:
    return str(number) if float(number).is_integer() else f"{number:g}"


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond a float's range
        return False


def Int(least: float | None = None, most: float | None = None, above: bool = False, unit: str = "") -> Number:
    return Number(least, most, above, unit, integer=True)


@dataclass(frozen=True)
class Bool(Spec):
    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, bool):
            raise Invalid(key, "must be true or false", value)


@dataclass(frozen=True)
class Text(Spec):
    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise Invalid(key, "must be a text", value)


@dataclass(frozen=True)
class Line(Spec):
    """One line of printable text (a title: a heading of the feedback, a page's <title>): no
    newline, no control or direction character, at most `most` characters."""

    most: int = 200

    def check(self, value: Any, key: str) -> None:
        Text().check(value, key)
        if not value.isprintable() or len(value) > self.most:
            raise Invalid(key, f"must be one line of printable text, at most {self.most} characters", value)


@dataclass(frozen=True)
class Edited(Spec):
    """A line a student reads: one for every language, or one per language the kit writes
    ({en: ..., pt-BR: ...}, every one of them)."""

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, dict):
            return Line().check(value, key)
        from autograder import messages

        for lang, text in value.items():
            try:
                Language().check(lang, _join(key, lang))
            except Invalid:
                known = ", ".join(messages.LANGUAGES)
                raise Invalid(
                    _join(key, lang), f"is not a setting of the kit: keys here are languages ({known})"
                ) from None
            Line().check(text, _join(key, lang))
        missing = set(messages.LANGUAGES) - {messages.normalize(lang) for lang in value}
        if missing:
            raise Invalid(
                key,
                "must give a text in every language the kit writes (missing " + ", ".join(sorted(missing)) + ")",
                value,
            )
        return None


@dataclass(frozen=True)
class Choice(Spec):
    choices: tuple[Any, ...]

    def check(self, value: Any, key: str) -> None:
        if isinstance(value, bool) or value not in self.choices:
            raise Invalid(key, "must be one of " + ", ".join(map(str, self.choices)), value)


@dataclass(frozen=True)
class Language(Spec):
    """A language the kit writes ("pt-BR", "en") or one of its aliases ("pt", "pt_BR")."""

    def check(self, value: Any, key: str) -> None:
        from autograder import messages

        try:
            messages.normalize(value)
        except messages.MessageError:
            raise Invalid(key, "must be one of " + ", ".join(messages.LANGUAGES), value) from None


@dataclass(frozen=True)
class ListOf(Spec):
    item: Spec
    nonempty: bool = False

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, list) or (self.nonempty and not value):
            raise Invalid(key, "must be a " + ("non-empty " if self.nonempty else "") + "list", value)
        for i, v in enumerate(value):
            self.item.check(v, f"{key}[{i}]")


Rule = Callable[[dict[str, Any], str], None]  # a section's value and its key; raises Invalid


@dataclass(frozen=True)
class Section(Spec):
    """A mapping. `fields`: its known keys; `required`: those it must hold (None: every one of
    `fields`). `names`/`each`: any other key for which `names(key)` holds, its value checked
    by `each` (a table: questions, dtypes); `names_are` says which keys, for the message."""

    fields: Mapping[str, Spec] = field(default_factory=dict)
    required: tuple[str, ...] | None = None
    names: Callable[[Any], bool] | None = None
    each: Spec | None = None
    names_are: str = ""
    nonempty: bool = False
    rules: tuple[Rule, ...] = ()

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, dict):
            raise Invalid(key, "must be a mapping", value)
        if self.nonempty and not value:
            raise Invalid(key, "must not be empty", shown=False)
        for name, v in value.items():
            if name in self.fields:
                self.fields[name].check(v, _join(key, name))
            elif self.names is not None and self.names(name):
                assert self.each is not None
                self.each.check(v, _join(key, name))
            else:
                raise Invalid(_join(key, name), self._unknown(name), shown=False)
        required = tuple(self.fields) if self.required is None else self.required
        missing = [n for n in required if n not in value]
        if missing:
            raise Invalid(key, "needs " + ", ".join(missing), shown=False)
        for rule in self.rules:
            rule(value, key)

    def _unknown(self, name: Any) -> str:
        close = difflib.get_close_matches(str(name), list(self.fields), n=1)
        if close:
            return f"is not a setting of the kit (did you mean {close[0]}?)"
        if self.names_are:
            return f"is not a setting of the kit: keys here are {self.names_are}"
        known = ", ".join(self.fields)
        return f"is not a setting of the kit (known: {known})" if known else "is not a setting of the kit"


@dataclass(frozen=True)
class Declared(Spec):
    """A mapping whose keys its assignment's declaration says (`_settings_as_declared`: its run, its cost settings)."""

    def check(self, value: Any, key: str) -> None:
        if not isinstance(value, dict):
            raise Invalid(key, "must be a mapping", value)


def identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


# -- the sections ---------------------------------------------------------------------------
DTYPES = ("float64", "float32", "float16", "bfloat16")
DEVICES = ("cpu", "meta", "cuda")
POSITIVE = Number(0, above=True)
# What the machine takes, for the settings that become an operating system limit, a timer or
# a sum: a worker's rlimits are C longs in bytes (a MiB count times 2**20), its wall-clock
# timers add twice a CPU budget, a score sums the points. Past these a course's "no limit"
# (1e12) would fail in every worker or write an infinite score; refused here, by key.
MOST_SECONDS = 7 * 24 * 3600  # a week: no submission of a course needs more
MOST_MIB = 1 << 20  # 1 TiB
MOST_BYTES = 1 << 40
MOST_PROCESSES = 1 << 22  # Linux's largest pid_max
MOST_POINTS = 1_000_000
FRACTION = Number(0, 1)
COUNT = Int(0, above=True)

# What a student sees of a question's feedback at submission and after the deadline
# (autograder/release.py): the course's, an assignment's, a question's own.
LEVEL = Choice(release.LEVELS)
TERMS = {"at_submission": LEVEL, "after_deadline": LEVEL}
FEEDBACK = Section({**TERMS, "released": Choice(release.RELEASED)}, required=())


def _feedback_questions(assignment: dict[str, Any], key: str) -> None:
    """An assignment's feedback terms name only its own questions."""
    named = ((assignment.get("feedback") or {}).get("questions")) or {}
    for name in named:
        if name not in assignment["questions"]:
            known = ", ".join(assignment["questions"])
            raise Invalid(f"{key}.feedback.questions.{name}", f"is not a question of this assignment (known: {known})")


ASSIGNMENT = Section(
    {
        "title": Edited(),
        "questions": Section(
            names=identifier,
            each=Number(0, MOST_POINTS, above=True, unit="points"),
            names_are="question names",
            nonempty=True,
        ),
        "feedback": Section(
            {
                **FEEDBACK.fields,
                "questions": Section(names=identifier, each=Section(TERMS, required=()), names_are="question names"),
            },
            required=(),
        ),
        "run": Declared(),
        "costs": Declared(),
    },
    required=("questions",),
    rules=(_feedback_questions,),
)
TOLERANCE = Section({"atol": Number(0), "rtol": Number(0)})
TOLERANCES = Section(
    {**{d: TOLERANCE for d in DTYPES}, "by_hand": Section({"decimals": Int(0, 12)})},
    required=("by_hand",),
)
DEVICE_DTYPES = ListOf(Choice(DTYPES))
COUNTEREXAMPLE = Section(
    {
        "seconds": Number(0, MOST_SECONDS, unit="seconds"),
        "calls": Int(0),
        "numbers": Int(1),
        "decimals": Int(0, 12),
        "seed": Int(0),
    },
    required=(),
)
SCORING = Section(
    {
        "evidence_devices": ListOf(Choice(DEVICES)),
        "isolate_dependencies": Bool(),
        "weights": Section(
            names=identifier,
            each=Section(names=identifier, each=Number(0, MOST_POINTS), names_are="check (test function) names"),
            names_are="question names",
        ),
        "counterexample": COUNTEREXAMPLE,
    },
    required=(),
)


def _load_within_submission(limits: dict[str, Any], key: str) -> None:
    """Loading the notebook runs inside the submission's CPU budget: a worker whose load limit
    (its soft RLIMIT_CPU) is not below the submission's (the hard one) cannot be confined."""
    load, total = limits.get("load_seconds"), limits.get("submission_cpu_seconds")
    if load is not None and total is not None and int(load) + 1 > int(total):
        raise Invalid(
            f"{key}.load_seconds",
            f"must be below submission_cpu_seconds ({total:g}): loading runs inside the submission's CPU budget",
            load,
        )


LIMITS = Section(
    {
        "cpu_seconds_per_call": Number(0, MOST_SECONDS, above=True, unit="seconds"),
        "load_seconds": Number(0, MOST_SECONDS, above=True, unit="seconds"),
        "memory_mb": Int(0, MOST_MIB, above=True, unit="MiB"),
        "output_bytes": Int(0, MOST_BYTES, above=True, unit="bytes"),
        "processes": Int(0, MOST_PROCESSES, above=True),
        "submission_cpu_seconds": Number(0, MOST_SECONDS, above=True, unit="seconds"),
        "disk_mb": Int(0, MOST_MIB, above=True, unit="MiB"),
        "reply_bytes": Int(0, MOST_BYTES, above=True, unit="bytes"),
        "submission_seconds": Number(0, MOST_SECONDS, above=True, unit="seconds"),
        "notebook_file_mb": Number(0, MOST_MIB, above=True, unit="MiB"),
        "notebook_code_kb": Number(0, MOST_MIB, above=True, unit="KiB"),
        "reader_memory_mb": Number(0, MOST_MIB, above=True, unit="MiB"),
        "reader_seconds": Number(0, MOST_SECONDS, above=True, unit="seconds"),
        "export_metadata_mb": Number(0, MOST_MIB, above=True, unit="MiB"),
    },
    rules=(_load_within_submission,),
)


def _devices_have_tolerances(data: dict[str, Any], key: str) -> None:
    for device, dtypes in data["devices"].items():
        for dtype in dtypes:
            if dtype not in data["tolerances"]:
                raise Invalid(f"devices.{device}", f"names {dtype}, which tolerances does not set", dtypes)
    for device in data.get("scoring", {}).get("evidence_devices", ()):
        if device not in data["devices"]:
            raise Invalid("scoring.evidence_devices", f"names {device}, which devices does not list", device)


def _settings_as_declared(data: dict[str, Any], key: str) -> None:
    """Each assignment's run and cost settings are checked by its own schemas
    (`autograder.declarations`). Where the private root is absent nothing declares them,
    and none is read."""
    from autograder import declarations, layout

    if not layout.has_private():
        return
    for name, entry in data["assignments"].items():
        costs = declarations.costs(name)
        if "costs" in entry and costs is None:
            raise Invalid(
                f"assignments.{name}.costs", "is not a setting of this assignment: it grades no cost", shown=False
            )
        if costs is not None:
            if "costs" not in entry:
                raise Invalid(f"assignments.{name}", "needs costs (the settings of its cost checks)", shown=False)
            costs.check(entry["costs"], f"assignments.{name}.costs")
        declared = declarations.run(name)
        where = f"assignments.{name}.run"
        if "run" in entry:
            if declared is None:
                raise Invalid(where, "is not a setting of this assignment: it declares no training run", shown=False)
            declared.schema.check(entry["run"], where)
        elif declared is not None and declarations.RUN_QUESTION in entry["questions"]:
            raise Invalid(
                f"assignments.{name}", f"needs run (its {declarations.RUN_QUESTION} question's settings)", shown=False
            )


def _feedback_later_shows_more(data: dict[str, Any], key: str) -> None:
    """After the deadline a question shows at least what it showed at submission."""
    for assignment, entry in data["assignments"].items():
        for question in entry["questions"]:
            try:
                release.terms(data, assignment, question)
            except ValueError as exc:
                raise Invalid(f"assignments.{assignment}.feedback", f"is refused: {exc}", shown=False) from None


GRADING = Section(
    {
        "language": Language(),
        "assignments": Section(names=identifier, each=ASSIGNMENT, names_are="assignment names", nonempty=True),
        "tolerances": TOLERANCES,
        "devices": Section({d: DEVICE_DTYPES for d in DEVICES}, required=()),
        "scoring": SCORING,
        "limits": LIMITS,
        "ci": Section({"pass_fraction": FRACTION}, required=()),
        "feedback": FEEDBACK,
    },
    required=("assignments", "tolerances", "devices", "limits"),
    rules=(_devices_have_tolerances, _settings_as_declared, _feedback_later_shows_more),
)

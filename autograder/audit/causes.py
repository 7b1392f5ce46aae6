"""Do the likely causes a buggy catalog entry gets fit its code?

A catalog entry may declare the causes its bug reproduces (`causes: [key, ...]`, the
message keys a recomputation of that bug gives; the first is the one its questions
should name). Against them the audit counts, from the judge's plain data (results.json's
`extra_data.checks` and `extra_data.causes`, never the rendered words):

- every failing check that shows a cause the entry did not declare: a cause the code
  does not have (goal: none);
- whether a caught entry's targeted questions show one of its declared causes (goal:
  every one).

An entry that declares no cause is counted apart: its causes cannot be judged.
"""

from dataclasses import dataclass, field


@dataclass
class Fit:
    """The causes one entry's failing checks showed, judged against its declared ones."""

    declared: bool
    unfit: list = field(default_factory=list)  # [(question, check, cause key)] the code does not have
    expected: bool = False  # a declared cause shown on one of the entry's targeted questions


def shown(data):
    """[(question, check, [cause keys])] of every failing check in one results.json's data."""
    ed = data.get("extra_data") or {}
    keys = [c.get("key") for c in ed.get("causes") or []]
    out = []
    for record in ed.get("checks") or []:
        if record.get("failed") or record.get("evidence_failed"):
            out.append((record["question"], record["check"], [keys[i] for i in record.get("causes") or []]))
    return out


def fit(entry, data):
    """How the causes the judge gave `entry` (its results.json `data`) fit its declared ones."""
    if entry.correct or not entry.causes:
        return Fit(declared=bool(entry.causes))
    failing = shown(data)
    unfit = [(q, check, key) for q, check, keys in failing for key in keys if key not in entry.causes]
    expected = any(key in entry.causes for q, _, keys in failing if q in entry.questions for key in keys)
    return Fit(declared=True, unfit=unfit, expected=expected)


def figures(rows):
    """(the audit summary's lines, how many of them are faults) for the rows of one assignment
    (each row's last item a `Fit`, its verdict the fourth): a cause not in the code and a
    caught entry without its expected cause are each a fault of the suites."""
    buggy = [r for r in rows if not r[0].correct and isinstance(r[-1], Fit)]
    if not buggy:
        return [], 0
    declared = [r for r in buggy if r[-1].declared]
    unfit = [(r[0].name, *u) for r in declared for u in r[-1].unfit]
    caught = [r for r in declared if r[3] == "caught"]
    right = [r for r in caught if r[-1].expected]
    lines = [
        f"failing checks showing a cause the entry's code does not have: {len(unfit)}"
        f" (entries declaring their causes: {len(declared)}/{len(buggy)})",
        f"caught entries with their expected cause: {len(right)}/{len(caught)}",
    ]
    lines += [f"    CAUSE NOT IN THE CODE: {name} {q}::{check}: {key}" for name, q, check, key in unfit]
    lines += [
        f"    NO EXPECTED CAUSE: {r[0].name} (expects {', '.join(r[0].causes)})" for r in caught if not r[-1].expected
    ]
    return lines, len(unfit) + len(caught) - len(right)

"""Do the likely causes a buggy catalog entry gets fit its code?

A catalog entry may declare the causes its bug reproduces (`causes: [key, ...]`, the
message keys a recomputation of that bug gives; the first is the one its questions
should name). Against them the audit counts, from the judge's plain data (results.json's
`extra_data.checks` and `extra_data.causes`, never the rendered words):

- every failing check that shows a cause the entry did not declare: a cause the code
  does not have (goal: none);
- whether a caught entry's targeted questions show one of its declared causes (goal:
  every one).

An entry may declare `causes: []`: a bug its symptoms name alone (a loop the vectorisation
check times, a missing ValueError), where any cause shown is one its code does not have and
its expected cause is none at all. An entry with no `causes:` line is counted apart: its
causes cannot be judged.
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
    if entry.correct or entry.causes is None:
        return Fit(declared=entry.causes is not None)
    failing = shown(data)
    unfit = [(q, check, key) for q, check, keys in failing for key in keys if key not in entry.causes]
    if not entry.causes:  # a bug its symptoms name alone: right when no check names a cause
        return Fit(declared=True, unfit=unfit, expected=not unfit)
    expected = any(key in entry.causes for q, _, keys in failing if q in entry.questions for key in keys)
    return Fit(declared=True, unfit=unfit, expected=expected)


def fits(chosen, graded):
    """{(assignment, name): Fit} of the entries of `chosen`, from their results.json data (`graded`, in order)."""
    return {(e.assignment, e.name): fit(e, data) for e, data in zip(chosen, graded)}


def figures(rows, fits):
    """(the audit summary's lines, how many of them are faults) for the audit's rows of one
    assignment (`run.verdicts`: entry first, verdict fourth) and their `fits`: a cause not in
    the code and a caught entry without its expected cause are each a fault of the suites."""
    judged = [(r[0], r[3], fits[(r[0].assignment, r[0].name)]) for r in rows if (r[0].assignment, r[0].name) in fits]
    buggy = [(e, verdict, f) for e, verdict, f in judged if not e.correct]
    if not buggy:
        return [], 0
    declared = [(e, verdict, f) for e, verdict, f in buggy if f.declared]
    unfit = [(e.name, *u) for e, _, f in declared for u in f.unfit]
    caught = [(e, f) for e, verdict, f in declared if verdict == "caught"]
    right = [e for e, f in caught if f.expected]
    silent = [e for e in right if not e.causes]
    lines = [
        f"failing checks showing a cause the entry's code does not have: {len(unfit)}"
        f" (entries declaring their causes: {len(declared)}/{len(buggy)})",
        f"caught entries with their expected cause: {len(right)}/{len(caught)}"
        + (f" ({len(silent)} of them expecting none: their symptoms name the bug)" if silent else ""),
    ]
    lines += [f"    CAUSE NOT IN THE CODE: {name} {q}::{check}: {key}" for name, q, check, key in unfit]
    lines += [
        f"    NO EXPECTED CAUSE: {e.name} (expects {', '.join(e.causes) or 'none'})"
        for e, f in caught
        if not f.expected
    ]
    return lines, len(unfit) + len(caught) - len(right)

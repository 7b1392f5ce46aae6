"""Known implementations of the contract, buggy and correct, and tools to fill
them into student notebooks (used by the examples, the kit's tests and, later,
`python -m autograder audit`).

Each catalog entry `catalog/<assignment>/<entry>.py` is a small module whose
docstring is YAML:

    bug: the bug in one line (or `correct: ...` for a correct variant)
    functions: [names the entry defines]
    questions: [questions that must lose points; empty for a correct variant]
    causes: [the likely causes (message keys) the bug reproduces, the expected one first]

and whose body defines those functions as a student would write them.
"""

from collections.abc import Sequence


def main(
    *,
    assignment: str | None = None,
    no_progress: bool = False,
    hostile: bool = False,
    case: Sequence[str] | None = None,
) -> int:
    """`audit`: grade every catalog entry (of `assignment`, default all) and print what the hidden
    suites catch; `hostile`: grade the battery of hostile and broken submissions instead (only the
    cases named in `case`, if any)."""
    if hostile:
        from autograder.audit.hostile import main as battery

        return battery(no_progress=no_progress, case=case)
    import sys

    from autograder import config

    if assignment and assignment not in config.load().assignments:  # before the judge's imports (torch)
        print(f"unknown assignment {assignment!r}", file=sys.stderr)
        return 2
    from autograder.audit.run import main as entries

    return entries(assignment=assignment, no_progress=no_progress)

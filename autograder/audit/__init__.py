"""Known implementations of the contract, buggy and correct, and tools to fill
them into student notebooks (used by the examples, the kit's tests and, later,
`python -m autograder audit`).

Each catalog entry `catalog/<assignment>/<entry>.py` is a small module whose
docstring is YAML:

    bug: the bug in one line (or `correct: ...` for a correct variant)
    functions: [names the entry defines]
    questions: [questions that must lose points; empty for a correct variant]

and whose body defines those functions as a student would write them.
"""

"""The private root: everything a student must never read.

    solutions/  reference implementations (one source per function; in a
                checkout this is the top-level `solutions/` folder)
    suites/     the hidden suites' shared library (one job per module, conftest, pytest.ini)
    assignments/<name>/   an assignment's hidden pytest suites, and its
                catalog/ of known buggy and correct implementations (the
                mutation audit)

Only the judge imports from here. No worker can reach it: a worker's file
system holds the interpreter, its libraries and the worker side of the kit
(`autograder.protocol`, `autograder.worker`), nothing else of any copy of the
kit (`autograder.sandbox.view`). An autograder zip carries one assignment's
share of it; the public part of the kit carries none of it.
"""

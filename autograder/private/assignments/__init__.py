"""One folder per assignment: its hidden suites (test_<question>.py, one per
question, and the helpers they share) and `catalog/`, the known buggy and
correct implementations the mutation audit grades (read as text, never
imported). The suites' shared library is `autograder.private.suites`."""

"""The training lab, declared (`autograder.declarations`): its hidden suites are this
folder's test_<question>.py, its audit catalog `catalog/`; its run in the grader below."""

from autograder.declarations import Run

from . import run

RUN = Run(schema=run.SCHEMA, legacy_section="training_run", text=run.grading_text)

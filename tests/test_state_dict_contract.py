"""Every graded class is checked through its state_dict, as a training run loads it:
parameters and persistent buffers. The worker lists a built module's persistent buffers
beside its parameters (read from the modules' own dicts), and the hidden parameter check of
every graded class, in every assignment, charges one the contract does not list, naming the
key and `persistent=False`; the same table registered with persistent=False passes."""

import importlib
from pathlib import Path

import pytest

from autograder import config
from autograder.audit.catalog import reference_sources
from autograder.judge import provided_source
from autograder.judge.detect import question_name
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from autograder.judge.stand_in import StandIn, graded_classes
from autograder.messages import language
from conftest import limits

CFG = config.load()
ASSIGNMENTS = [a for a in CFG.assignments if graded_classes(a)]

# Each graded class of the reference keeps a cached table, `cache`, as a buffer; whether it
# is persistent is a switch of the worker's namespace (one worker per assignment).
CACHED = """
PERSISTENT = True


def keep_persistent(flag):
    global PERSISTENT
    PERSISTENT = flag


def _cached(base):
    class Cached(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.register_buffer("cache", torch.ones(3), persistent=PERSISTENT)

    Cached.__name__ = Cached.__qualname__ = base.__name__
    return Cached
"""


def _code(assignment):
    sources = reference_sources(assignment)
    wrapped = "\n".join(f"{n} = _cached({n})" for n in graded_classes(assignment))
    head = "import math\n\nimport torch\nfrom torch import nn\n"
    return head + CACHED + "\n\n" + "\n\n".join(sources.values()) + "\n\n" + wrapped + "\n"


def test_every_graded_class_is_covered():
    assert set(ASSIGNMENTS) == {"multi_head", "seq2seq_attention", "transformer_block", "efficient_attention"}


@pytest.mark.slow  # a worker per assignment, the reference's code loaded
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_persistent_buffer_fails_the_parameter_check_of_every_graded_class(assignment, forkserver):
    code = _code(assignment)
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    remote = Remote(
        sub,
        provided_source(assignment),
        limits(cpu_seconds_per_call=30, load_seconds=60),
        forkserver=forkserver,
        stand_in=StandIn(assignment, CFG),
    )
    try:
        for name in graded_classes(assignment):
            suite = importlib.import_module(f"autograder.private.assignments.{assignment}.test_{question_name(name)}")
            for persistent in (True, False):
                assert remote.call("keep_persistent", [persistent]).ok
                with language("en"):
                    if not persistent:  # the contract's way to keep a table: out of the state_dict
                        suite.test_parameters(remote, CFG)
                        continue
                    with pytest.raises(pytest.fail.Exception) as failed:
                        suite.test_parameters(remote, CFG)
                message = str(failed.value)
                assert "state_dict holds cache, a persistent buffer" in message, (name, message)
                assert 'register_buffer("cache", ..., persistent=False)' in message, (name, message)
    finally:
        remote.close()

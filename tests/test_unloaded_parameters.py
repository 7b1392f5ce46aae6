"""A property check never runs on parameters it did not load: the worker builds every module
from one seed, so a parameter the judge does not load (a head's bias the contract has not)
holds the same values in every call, and a property compared across calls (causality,
padding) sees the student's module, never two draws of it.

Each graded class of the transformer lab, wrapped to keep such a parameter and add it to its
output, passes the property checks that compare two calls: only the values (and the parameter
check) may charge it, never a causal or padding cause it does not have."""

import importlib
from pathlib import Path

import pytest

from autograder import config
from autograder.audit.catalog import reference_sources
from autograder.judge import provided_source
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import CallOptions, Remote
from autograder.judge.stand_in import StandIn, graded_classes
from autograder.messages import language
from autograder.private.suites import tensors
from conftest import limits

CFG = config.load()
ASSIGNMENT = "transformer_block"

# Each graded class keeps one parameter the contract has not, drawn at construction, and adds
# it to its first output: before the worker seeded construction, each call drew another.
UNLOADED = """
def _unloaded(base):
    class Unloaded(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.stray = nn.Parameter(torch.randn(()))

        def forward(self, *args, **kwargs):
            out = super().forward(*args, **kwargs)
            return (out[0] + self.stray, *out[1:]) if isinstance(out, tuple) else out + self.stray

    Unloaded.__name__ = Unloaded.__qualname__ = base.__name__
    return Unloaded


class Drawn(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x * self.w)
"""

# (suite, property checks that compare two calls of one module)
PROPERTIES = [
    ("test_decoder_block", ["test_causal_structure", "test_padding_changes_nothing"]),
    ("test_transformer_lm", ["test_causal_structure", "test_padding_changes_nothing"]),
]


@pytest.fixture(scope="module")
def remote(forkserver):
    sources = reference_sources(ASSIGNMENT)
    wrapped = "\n".join(f"{n} = _unloaded({n})" for n in graded_classes(ASSIGNMENT))
    code = "import math\n\nimport torch\nfrom torch import nn\n" + UNLOADED + "\n\n".join(sources.values())
    code += "\n\n" + wrapped + "\n"
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    r = Remote(
        sub,
        provided_source(ASSIGNMENT),
        limits(cpu_seconds_per_call=60, load_seconds=60),
        forkserver=forkserver,
        stand_in=StandIn(ASSIGNMENT, CFG),
    )
    yield r
    r.close()


@pytest.mark.slow  # a worker with the reference's classes loaded
def test_a_module_built_twice_holds_the_same_unloaded_values_and_dropout(remote):
    """Any module the judge builds (not only a graded class): its unloaded parameters and
    its dropout draw the same numbers in every call."""
    x = tensors.randn((4, 16), 1)
    opts = CallOptions(construct={"args": [16], "kwargs": {}}, to={"dtype": "float64"})
    first, second = remote.call("Drawn", [x], {}, opts), remote.call("Drawn", [x], {}, opts)
    assert first.ok and second.ok, (first.error, second.error)
    assert (first.value == second.value).all()
    assert (first.value == 0).any() and (first.value != 0).any()  # dropout ran: a draw, the same one


@pytest.mark.slow  # a worker with the reference's classes, two suites' property checks
@pytest.mark.parametrize(("suite", "checks"), PROPERTIES)
def test_property_checks_see_one_module_whatever_it_holds_unloaded(remote, suite, checks):
    module = importlib.import_module(f"autograder.private.assignments.{ASSIGNMENT}.{suite}")
    with language("en"):
        for check in checks:
            getattr(module, check)(remote, CFG)  # passes: the stray parameter is the same in every call
        with pytest.raises(pytest.fail.Exception):
            module.test_shapes_and_values(remote, CFG)  # its values still differ from the reference's

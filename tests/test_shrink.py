"""The one shrinking engine (autograder/judge/shrink/) and the vectorised check, alone
(plain Python functions and the suites' own case makers, no worker): only a declared
refusal skips a candidate, the kit's own errors propagate; a language model's module
counterexample shrinks to a case a student can type in; a branch on a size is told from
a Python loop. The catalog's counterexamples: tests/test_counterexamples.py."""

import pytest
import torch

from autograder import config, messages
from autograder.judge import counterexample as cx
from autograder.judge import shrink
from autograder.private.suites import properties
from conftest import ROOT

CFG = config.load(ROOT / "grading.yml")
ATOL, RTOL = CFG.tolerance(torch.float64)
ROOMY = shrink.Budget(seconds=60.0, calls=30)  # a loaded machine's wall clock never ends these searches


def _differs(got, expected):
    return any(not torch.allclose(got[n].double(), e.double(), atol=ATOL, rtol=RTOL) for n, e in expected.items())


def _twice(x):
    return {"y": 2 * x}


def _search(reference, student=None, calls=None):
    def run(a, k, seconds):
        calls.append(a) if calls is not None else None
        return {"y": 3 * a[0]} if student is None else student(a, k)

    return shrink.search_function("f", [torch.randn(3, 4, dtype=torch.float64)], {}, run, reference, _differs, ROOMY)


# -- only a declared refusal skips a candidate ----------------------------------------------
@pytest.mark.parametrize("error", [NameError("helper"), KeyError("w_q"), TypeError("bad call"), AssertionError()])
def test_an_error_of_the_reference_or_a_helper_propagates(error):
    def reference(a, k):
        raise error

    with pytest.raises(type(error)):
        _search(reference)


@pytest.mark.parametrize("refusal", [ValueError("not divisible"), RuntimeError("shapes cannot be multiplied")])
def test_a_declared_refusal_of_the_reference_skips_the_candidate_and_costs_no_call(refusal):
    calls = []

    def reference(a, k):  # refuses every input, as the contract's ValueError or torch's RuntimeError
        return shrink.refusing(lambda x: (_ for _ in ()).throw(refusal), a[0])

    assert _search(reference, calls=calls) is None and calls == []
    assert _search(lambda a, k: None, calls=calls) is None and calls == []  # None: a refusal too


def test_a_module_case_maker_that_raises_propagates_and_one_that_refuses_is_skipped():
    failing = {"B": 2, "D": 4}

    def student(case, seconds):
        raise AssertionError("never called: no case was made")

    def broken(at, seed):
        return undefined_helper(at)  # noqa: F821 - the kit's own bug, as in a suite helper

    with pytest.raises(NameError):
        shrink.search_module("M", failing, broken, student, ("y",), _differs, ROOMY)

    def refusing(at, seed):
        if at["D"] % 2:
            raise shrink.Refused("an odd width")
        return None

    spent = shrink.Ledger()
    assert shrink.search_module("M", failing, refusing, student, ("y",), _differs, ROOMY, spent) is None
    assert spent.calls == 0


def test_the_engine_runs_a_candidate_once():
    calls = []
    found = _search(lambda a, k: _twice(a[0]), calls=calls)
    assert found is not None
    seen = [(tuple(a[0].shape), a[0].flatten().tolist()) for a in calls]
    assert len(seen) == len(set(map(repr, seen))), "a candidate made from the same seed was sent twice"


# -- a module counterexample a student can type in ------------------------------------------
def test_a_language_model_counterexample_shrinks_to_a_few_tokens():
    from autograder.private.assignments.transformer_block import test_transformer_lm as lm

    case = lm.Case(*lm.SIZES[0], seed=200, padded=True)  # the suite's failing case: B 3, T 6, V 11, 2 layers
    sizes, make, sent = case.fresh()

    def student(made, seconds):  # its final layer norm's scale off by half
        state = {n: v * 1.5 if n.startswith("ln_f.") else v for n, v in made.state.items()}
        with torch.no_grad():
            return dict(zip(lm.OUT, made.reference(state, made.args, made.kwargs)))

    found = shrink.search_module("TransformerLM", sizes, make, student, lm.OUT, _differs, ROOMY, sent=sent)
    assert found is not None
    (tokens,) = found.args
    assert tokens.numel() <= 2, tokens.shape  # was 12 of 18 tokens shown
    assert found.label.endswith(", 1)"), found.label  # one layer
    with messages.language("en"):
        lines = cx.render_module(found, ROOMY).lines
    assert not any("(the first" in line for line in lines), lines


def test_a_case_too_large_to_show_says_plainly_it_cannot_be_typed_in():
    state = {f"w{i}": torch.ones(13, dtype=torch.float64) for i in range(3)}
    found = shrink.ModuleFound([], {}, {"y": torch.ones(1)}, {"y": torch.zeros(1)}, label="M()", state=state)
    with messages.language("en"):
        (params,) = [line for line in cx.render_module(found, shrink.Budget()).lines if line.startswith("Parameters")]
    assert "39 numbers in 3 tensors" in params and "cannot be typed in" in params


# -- the vectorised check: a loop grows at every size, a branch once --------------------------
def test_a_branch_on_a_size_is_no_loop_and_a_loop_is():
    properties.ops_grow("f", lambda n: 12 + (n > 5), (2, 7, 12), "query_length")  # one more operation past T_k = 5
    properties.ops_grow("f", lambda n: 12, (2, 4, 6), "batch")
    with messages.language("en"), pytest.raises(pytest.fail.Exception) as failed:
        properties.ops_grow("f", lambda n: 12 + 3 * n, (2, 7, 12), "query_length")
    assert "18" in str(failed.value) and "48" in str(failed.value)  # the smallest size's count and the largest's
    with pytest.raises(pytest.fail.Exception):
        properties.ops_grow("f", lambda n: None if n > 2 else 1, (2, 4, 6), "batch")  # no count came back


@pytest.mark.parametrize("sizes", [(2, 6), (6, 4, 2), (2, 2, 4)])
def test_the_vectorised_check_needs_three_increasing_sizes(sizes):
    with pytest.raises(ValueError):
        properties.ops_grow("f", lambda n: 1, sizes, "batch")

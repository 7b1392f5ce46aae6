"""Probes never reach a verdict (autograder/judge/remote.py): a call the judge makes for itself
to explain a failure (a counterexample search, a likely cause's second look) tells the
student's code that it failed, so `Remote` takes every verdict call first and refuses a
probe before `end_verdicts` or a verdict call after it; the suites hand their looks to the
judge on the failure's exception (`KitPlugin.second_looks`), which runs them once the suites
are done. The battery's `sdpa_fixed_once_probed` is the attack this closes."""

from pathlib import Path

import pytest
import torch

from autograder import config, layout
from autograder.judge import KitPlugin, TestOutcome
from autograder.judge.counterexample import Shown
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import CallOrderError, Remote
from conftest import ROOT, grade, limits

CFG = config.load(ROOT / "grading.yml")
CODE = """
SEEN = []
def f(x):
    SEEN.append(x.numel())
    return x * 2, torch.tensor(float(len(SEEN)))
"""


@pytest.fixture
def remote(forkserver):
    source = "import torch\n" + CODE
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, source, source)])
    r = Remote(sub, "", limits(cpu_seconds_per_call=2, load_seconds=30), forkserver=forkserver)
    yield r
    r.close()


def test_no_probe_before_the_last_verdict_call_and_no_verdict_call_after_one(remote):
    x = torch.ones(3)
    assert remote.call("f", [x]).ok
    with pytest.raises(CallOrderError):
        remote.probe("f", [x])
    remote.end_verdicts()
    probed = remote.probe("f", [x])
    assert probed.ok and float(probed.value[1]) == 2  # the worker's own count: the one verdict call, then it
    with pytest.raises(CallOrderError):
        remote.call("f", [x])


def test_a_look_that_fails_is_the_kits_fault_and_the_others_still_run(remote):
    """A look raising is reported to the staff (never a quiet missing line); the next look
    still gives its failure the counterexample it found, and a look finding nothing
    leaves its failure as it was."""
    plugin = KitPlugin(remote, remote.submission, CFG, "classic_attention")
    plugin.outcomes = [TestOutcome("q", f"test_{k}", "", False, "wrong") for k in range(3)]

    def broken():
        raise ValueError("a bug of the suite")

    def found():
        reply = remote.probe("f", [torch.ones(2)])
        return Shown((f"f(ones(2)) gave {reply.value[0].tolist()}",), "function", 2)

    plugin._looks = [(0, "counterexample", broken), (1, "counterexample", found), (2, "explain", lambda: None)]
    plugin.second_looks()
    assert len(plugin.internal_errors) == 1 and "a bug of the suite" in plugin.internal_errors[0]
    shown = [o.counterexample.lines if o.counterexample else None for o in plugin.outcomes]
    assert shown == [None, ("f(ones(2)) gave [2.0, 2.0]",), None]
    assert plugin.outcomes[2].message == "wrong"


def test_a_look_that_answers_what_no_look_answers_is_the_kits_fault(remote):
    """A look answers a `counterexample.Shown` (a counterexample's) or a `Said` (a cause's), or
    None; anything else (lines of text, a bare string) is the kit's own fault, reported,
    never shown to the student as it came."""
    plugin = KitPlugin(remote, remote.submission, CFG, "classic_attention")
    plugin.outcomes = [TestOutcome("q", f"test_{k}", "", False, "wrong") for k in range(2)]
    plugin._looks = [(0, "counterexample", lambda: ["a line"]), (1, "explain", lambda: "a cause")]
    plugin.second_looks()
    assert len(plugin.internal_errors) == 2, plugin.internal_errors
    assert all(o.counterexample is None and o.message == "wrong" for o in plugin.outcomes)
    assert not remote.verdicts_open


# One graded catalog bug per kind of look (each runs only after the verdicts: one made
# while a verdict call could still come raises CallOrderError, the kit's fault):
# (entry, question, a fragment of what its look adds to the question's feedback)
LOOKS = [
    ("scaled_dot_product/sdpa_scaled_by_dk", "scaled_dot_product_attention", "Your output"),  # function search
    ("multi_head/mha_no_out_proj", "multi_head_attention", "Your output"),  # module search
    ("classic_attention/dot_keys_detached", "dot_attention", "Your gradients"),  # gradient search
    ("seq2seq_attention/train_step_no_shift", "train_step", "Your output: losses="),  # a smaller train_step run
    ("multi_head/mhl_mask_without_head_axis", "multi_head_general_attention", "give it a head axis"),  # a cause
    ("multi_head/mha_keys_reshaped_with_query_length", "multi_head_attention", "for cross-attention"),  # a cause
]


@pytest.mark.slow
@pytest.mark.parametrize("entry, question, shown", LOOKS, ids=[e.split("/")[1] for e, _, _ in LOOKS])
def test_every_kind_of_look_runs_after_the_verdicts_and_still_shows(tmp_path, entry, question, shown):
    from autograder.audit import catalog
    from autograder.audit import run as audit_run

    assignment, name = entry.split("/")
    (path,) = audit_run.fill_catalog([catalog.load_entry(layout.catalog(assignment) / f"{name}.py")], tmp_path, "en")
    result = grade(path, cfg=CFG, lang="en", pytest_args=["-k", question])
    assert result.status == "graded", result.notes
    lines = result.questions[question].lines
    assert any(shown in line for line in lines), lines

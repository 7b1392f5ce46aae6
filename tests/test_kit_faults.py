"""Errors typed by origin (issue 34, item 1 and 3): a fault injected into each judge-side
place (the stand-in's answer for a function and for a class, the reference, a message, a
suite helper, a proxy, a second look) is loud: the result is `internal_error` and the staff
read the error; while a student's own error in the same call, or the reference refusing the
student's arguments there, stays the student's: a failed check with their error, no grader
fault. A worker that cannot be confined is the machine's fault: `grade` exits 3, never
the notebook's load failure. Real judge, real worker, real suites' helpers; only the fault
is planted."""

import json
import os
import subprocess
import sys

import pytest

from autograder import config
from autograder.grade import EXIT_GRADER_FAULT
from autograder.judge import proxies, remote, stand_in
from autograder.messages import t
from autograder.private.solutions import classic_attention as classic_ref
from autograder.private.suites import tensors
from conftest import ROOT, code_cell, grade, notebook, suite_skeleton

CFG = config.load(ROOT / "grading.yml")

CLASSIC_CODE = """import torch

def masked_softmax(scores, mask=None, dim=-1):
    raise NotImplementedError  # the judge stands in for it

def dot_attention(decoder_state, encoder_states, mask=None):
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)
    weights = masked_softmax(scores, mask)
    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights

def dot_attention_wrong(decoder_state, encoder_states, mask=None):
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)
    return masked_softmax(scores, torch.ones(7, dtype=torch.bool))  # a mask the reference refuses

def dot_attention_raises(decoder_state, encoder_states, mask=None):
    raise ValueError("my own bug")

def shapes_test(attention):
    attention(torch.randn(2, 4), torch.randn(2, 3, 4))

def shapes_test_wrong(attention):
    attention(torch.randn(2, 5), torch.randn(2, 3, 4))  # sizes the function refuses
"""

CLASSIC_SUITE = """import pytest

from autograder.judge import proxies
from autograder.judge.remote import CallOptions
from autograder.private.suites import failing, tensors

QUESTION = "dot_attention"


def _inputs(seed):
    return [tensors.randn((2, 4), seed), tensors.randn((2, 3, 4), seed + 1)]


def _check(reply):
    if not reply.ok:
        failing.fail(reply.error)


def _attention(q, H):
    return (H @ q.unsqueeze(-1)).squeeze(-1)


def _proxied(sub, name):
    options = CallOptions(call_with=[{"proxy": proxies.NAME}], answer=proxies.Recorder(_attention))
    return sub.call(name, [], {}, options)


def test_right(sub):
    _check(sub.call("dot_attention", _inputs(0)))


def test_wrong(sub):
    _check(sub.call("dot_attention_wrong", _inputs(1)))


def test_raises(sub):
    _check(sub.call("dot_attention_raises", _inputs(1)))


def test_proxy(sub):
    _check(_proxied(sub, "shapes_test"))


def test_proxy_wrong(sub):
    _check(_proxied(sub, "shapes_test_wrong"))


def test_look(sub):
    reply = sub.call("dot_attention_raises", _inputs(1))
    if not reply.ok:
        failing.fail_explained(reply.error, lambda: sub.probe("dot_attention_raises", _inputs(1)) and None)
"""

MODULE_CODE = """import torch
from torch import nn

class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        raise NotImplementedError  # the judge stands in for it

class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        return x + self.ffn(x)

class WrongBlock(DecoderBlock):
    def __init__(self, d_model, n_heads, d_ff):
        nn.Module.__init__(self)
        self.ffn = FeedForward(d_model, "wide")  # an argument the reference refuses

class RaisingBlock(DecoderBlock):
    def __init__(self, d_model, n_heads, d_ff):
        nn.Module.__init__(self)

    def forward(self, x, pad_mask=None):
        raise ValueError("my own bug")
"""

MODULE_SUITE = """import torch

from autograder.judge.remote import CallOptions
from autograder.private.suites import failing

QUESTION = "decoder_block"


def _check(sub, name):
    options = CallOptions(construct={"args": [8, 2, 12], "kwargs": {}})
    reply = sub.call(name, [torch.randn(2, 3, 8)], {}, options)
    if not reply.ok:
        failing.fail(reply.error)


def test_right(sub):
    _check(sub, "DecoderBlock")


def test_wrong(sub):
    _check(sub, "WrongBlock")


def test_raises(sub):
    _check(sub, "RaisingBlock")
"""

REFUSED = "answered by the grader"
OWN = "my own bug"


def _raise(kind):
    def planted(*args, **kwargs):
        raise kind("planted in the judge")

    return planted


def _render_fault(key):
    """messages.t, but the message `key` fails to render (a KeyError, as a field it lacks would)."""

    def render(name, /, *args, **kwargs):
        if name == key:
            raise KeyError("planted in the message " + key)
        return t(name, *args, **kwargs)

    return render


def _randn_fault(shape, seed, *args, **kwargs):
    """tensors.randn, failing (a NameError) for the right call's inputs only (seed 0)."""
    if seed == 0:
        raise NameError("name 'planted' is not defined")
    return RANDN(shape, seed, *args, **kwargs)


RANDN = tensors.randn

# What the student reads where nothing of the kit's failed: the reference refusing their
# arguments, their own error, a function their test called with sizes it refuses.
STUDENTS = {"test_wrong": REFUSED, "test_raises": OWN, "test_proxy_wrong": "RuntimeError", "test_look": OWN}

# place: (plant the fault, the checks it makes the kit's, what the staff read of it)
PLACES = {
    "stand_in_function_answer": (
        lambda mp: mp.setattr(stand_in, "_detached", _raise(KeyError)),
        {"test_right"},
        "planted in",
    ),
    # the reference's body loses `torch` (a NameError), but not its argument checks
    "reference": (lambda mp: mp.delattr(classic_ref, "torch"), {"test_right"}, "NameError"),
    "message_render": (
        lambda mp: mp.setattr(stand_in, "t", _render_fault("stand_in_error")),
        {"test_wrong"},
        "planted in",
    ),
    "suite_helper": (lambda mp: mp.setattr(tensors, "randn", _randn_fault), {"test_right"}, "planted"),
    "proxy": (lambda mp: mp.setattr(proxies, "_detached", _raise(KeyError)), {"test_proxy"}, "planted in"),
    # the look runs once the verdicts are in: its fault is the run's, the check keeps its verdict
    "second_look": (lambda mp: mp.setattr(remote.Remote, "probe", _raise(KeyError)), set(), "(explain): KeyError"),
}


def _graded(tmp_path, monkeypatch, assignment, code, suite):
    folder = suite_skeleton(tmp_path, assignment, monkeypatch)
    (folder / "__init__.py").write_text("")
    (folder / "test_planted.py").write_text(suite)
    path = tmp_path / "submission.ipynb"
    path.write_text(json.dumps(notebook(code_cell(code))))
    return path


def _outcomes(result):
    return {o.test: o for o in result.outcomes}


def _check_loud_and_students(result, kit, students, planted):
    assert result.status == "internal_error", result.internal_errors
    errors = " ".join(result.internal_errors)
    assert planted in errors, result.internal_errors
    outcomes = _outcomes(result)
    internal = t("internal_error")
    assert {n for n, o in outcomes.items() if o.message == internal} == kit, outcomes
    for name, said in students.items():
        o = outcomes[name]
        assert not o.passed and said in o.message and o.message != internal, (name, o.message)
    assert len(result.internal_errors) == max(len(kit), 1), result.internal_errors
    assert "Your code is not the cause" in result.to_gradescope()["output"]


@pytest.mark.slow
@pytest.mark.parametrize("place", list(PLACES))
def test_a_fault_planted_in_a_judge_side_place_is_loud_and_the_students_error_stays_theirs(
    place, tmp_path, monkeypatch
):
    path = _graded(tmp_path, monkeypatch, "classic_attention", CLASSIC_CODE, CLASSIC_SUITE)
    plant, kit, planted = PLACES[place]
    plant(monkeypatch)
    result = grade(path, assignment="classic_attention", cfg=CFG)
    students = {n: said for n, said in STUDENTS.items() if n not in kit}
    _check_loud_and_students(result, kit, students, planted)
    outcomes = _outcomes(result)
    assert all(outcomes[n].passed for n in outcomes if n not in kit | set(students)), outcomes


@pytest.mark.slow
def test_without_a_planted_fault_the_same_suite_grades_quietly(tmp_path, monkeypatch):
    """The control: the suites above, nothing planted: graded, every refusal and own error
    the student's, every other check passed."""
    path = _graded(tmp_path, monkeypatch, "classic_attention", CLASSIC_CODE, CLASSIC_SUITE)
    result = grade(path, assignment="classic_attention", cfg=CFG)
    assert result.status == "graded" and not result.internal_errors, result.internal_errors
    outcomes = _outcomes(result)
    failed = {n: o.message for n, o in outcomes.items() if not o.passed}
    assert set(failed) == {"test_wrong", "test_raises", "test_proxy_wrong", "test_look"}, failed
    assert REFUSED in failed["test_wrong"] and "RuntimeError" in failed["test_proxy_wrong"]


@pytest.mark.slow
def test_a_fault_in_the_stand_in_answer_for_a_class_is_loud(tmp_path, monkeypatch):
    path = _graded(tmp_path, monkeypatch, "transformer_block", MODULE_CODE, MODULE_SUITE)
    monkeypatch.setattr(stand_in, "_parts", _raise(KeyError))  # the construct answer's plumbing
    result = grade(path, assignment="transformer_block", cfg=CFG)
    _check_loud_and_students(result, {"test_right"}, {"test_wrong": REFUSED, "test_raises": OWN}, "planted in")
    assert "KeyError" not in _outcomes(result)["test_wrong"].message


@pytest.mark.slow
def test_a_worker_that_cannot_be_confined_is_a_grader_fault_exit_3(tmp_path):
    """A machine whose hard CPU limit is below the course's submission CPU limit, and which
    may not raise it (no CAP_SYS_RESOURCE: a batch system's or a container's limits): the
    kernel refuses setrlimit(RLIMIT_CPU) with EPERM in every worker. `grade` exits 3 with
    every result internal_error, the step named for the staff, and the student is never told
    that their notebook could not be run. (A course file asking for it is refused first, by
    the schema: a load limit above the submission's.)"""
    import shutil

    if not (shutil.which("prlimit") and shutil.which("setpriv")):
        pytest.fail("this test needs util-linux's prlimit and setpriv (apt-get install util-linux)")
    out = tmp_path / "out"
    example = ROOT / "examples/submissions/scaled_dot_product/reference.ipynb"
    hard = int(config.load(ROOT / "grading.yml").data["limits"]["submission_cpu_seconds"]) - 1
    proc = subprocess.run(
        ["prlimit", f"--cpu={hard}:{hard}", "setpriv", "--bounding-set=-sys_resource", "--"]
        + [sys.executable, "-m", "autograder", "grade", str(example), "--out", str(out)]
        + ["--assignment", "scaled_dot_product", "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "KIT_LANG": "en"},
    )
    assert proc.returncode == EXIT_GRADER_FAULT, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(next(out.rglob("results.json")).read_text())
    assert data["extra_data"]["status"] == "internal_error"
    assert any("setrlimit(RLIMIT_CPU) failed: EPERM" in e for e in data["internal_errors"]), data["internal_errors"]
    shown = data.get("output", "") + json.dumps(data["tests"])
    assert "Your code is not the cause" in shown
    assert "could not be run" not in shown and "setrlimit" not in shown, shown
    assert not data["extra_data"].get("flags", {}).get("not_run") and "not_run" not in data["extra_data"]

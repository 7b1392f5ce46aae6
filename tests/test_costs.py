"""Grading cost (issue 39, item 2): a memory cap on one call, held by the kernel and read back
by the judge, and a log of the calls a stood-in function answers, kept by the judge."""

import functools
import os
import types
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import CallOptions, Remote
from autograder.judge.stand_in import StandIn
from autograder.judge.watch import Watch, WatchRefused
from autograder.messages import t
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import costs
from autograder.sandbox import cgroup, memcap
from conftest import limits

CODE = """
import mmap, resource, sys
import torch
from torch import nn

def scores(n):
    return torch.ones(n, n).sum()

def lift(n):
    resource.setrlimit(resource.RLIMIT_DATA, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return scores(n)

def catch(n):
    try:
        return scores(n)
    except (MemoryError, RuntimeError):
        return torch.zeros(())

def shared(n):
    t = torch.frombuffer(mmap.mmap(-1, n * n * 4), dtype=torch.float32)
    t.fill_(1.0)
    return t.sum()

def attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, dim=-1)
    return w @ v

def step(q, k, v):
    return attention(q[..., -1:, :], k, v)

def step_recomputing(q, k, v):
    return attention(q, k, v)[..., -1:, :]

def step_inline(q, k, v):
    w = torch.softmax(q[..., -1:, :] @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, dim=-1)
    return w @ v

def step_for_show(q, k, v):
    attention(q[..., -1:, :] * 0, k * 0, v * 0)   # the expected call, with fake data
    return step_inline(q, k, v)                     # and the real thing computed inline

def project(x):
    torch.manual_seed(0)
    layer = nn.Linear(4, 3)
    return layer(x[..., -1:, :]), layer.weight.detach()
"""

TAMPER = """
import sys
runner = sys.modules["autograder.worker.runner"]
runner._cap_memory = lambda limit, rpc: None
"""

FAKE_HANDSHAKE = """
import sys
runner = sys.modules["autograder.worker.runner"]
def _cap_memory(limit, rpc):
    rpc({"op": "callback", "kind": "memory_cap"})   # asks the judge to look, without lowering anything
    return None
runner._cap_memory = _cap_memory
"""


def _remote(forkserver, *cells, stand_in=None):
    sub = Submission(Path("inline.ipynb"), {}, [Cell(i + 1, c, c) for i, c in enumerate(cells)])
    return Remote(sub, "", limits(cpu_seconds_per_call=20, load_seconds=30), forkserver=forkserver, stand_in=stand_in)


@pytest.fixture
def remote(forkserver):
    r = _remote(forkserver, CODE)
    yield r
    r.close()


def capped(mb, need=None):
    return CallOptions(memory_mb=mb, reference_mb=need)


# -- the memory cap ------------------------------------------------------------------
def test_a_call_over_its_cap_fails_as_the_students_and_one_under_it_passes(remote):
    """A (T, T) float32 score matrix at T=16384 (1 GiB) under a 256 MB cap fails inside the worker, with
    the cap's words; one of 64 MB passes; the next call (uncapped) runs in a fresh worker."""
    small = remote.call("scores", [4096], options=capped(256, 40))
    assert small.ok and small.value == 4096 * 4096, small.error
    big = remote.call("scores", [16384], options=capped(256, 40))
    assert not big.ok and big.raised == "RuntimeError"
    assert big.error.startswith(t("memory_cap_exceeded", mb=256, need=40, error="")[:30]), big.error
    assert "scores" not in remote.dead  # the student's failure of this call, not a death of the function
    assert remote.call("scores", [64]).ok  # the worker retired after the capped call: a fresh one answers


def test_the_cap_is_read_back_from_the_kernel_on_every_process(remote):
    """The worker's hard RLIMIT_DATA, as /proc shows it, is the cap the judge asked; a bare worker's size
    comes from the kernel too."""
    remote.call("scores", [8], options=capped(128))
    data, _group = remote._bare
    assert data > 0
    limit, _ = remote._cap(128)
    assert limit == memcap.cap_bytes(data, 128)
    assert memcap.uncapped({os.getpid()}, limit) == [os.getpid()]  # the judge itself is not capped: seen


def test_a_student_cannot_lift_the_cap(remote):
    reply = remote.call("lift", [16384], options=capped(256))
    assert not reply.ok and reply.raised == "ValueError", reply.error  # a hard limit is not raised again


def test_catching_the_memory_error_earns_a_wrong_value_not_a_pass(remote):
    reply = remote.call("catch", [16384], options=capped(256))
    assert reply.ok and float(reply.value) == 0.0  # it returned: the value check (`within_memory`) decides


@pytest.mark.parametrize("cell", [TAMPER, FAKE_HANDSHAKE], ids=["skips_the_cap", "fakes_the_handshake"])
def test_a_worker_whose_code_goes_around_the_cap_fails_the_call(forkserver, cell):
    r = _remote(forkserver, CODE, cell)
    try:
        reply = r.call("scores", [64], options=capped(256))
        assert not reply.ok and reply.error == t("memory_cap_not_held", mb=256), reply.error
    finally:
        r.close()


@pytest.mark.skipif(
    not any(kind in ("v1-memory", "v2") for kind, _ in cgroup.layout()),
    reason="shared memory is held by the worker's control group: a root judge with a memory controller",
)
def test_shared_memory_past_the_cap_ends_in_the_groups_kill_worded_as_the_cap(remote):
    """RLIMIT_DATA does not count a shared mapping: the control group's lowered limit does."""
    reply = remote.call("shared", [16384], options=capped(256, 40))
    assert not reply.ok and t("memory_cap_killed") in reply.error, reply.error
    assert remote.call("scores", [64]).ok


# -- the call log ----------------------------------------------------------------------
def _attention(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5, dim=-1) @ v


QKV = [torch.randn(2, 5, 8, dtype=torch.float64) for _ in range(3)]


def test_the_judge_logs_what_each_stood_in_call_received(remote):
    watch = Watch({"attention": _attention})
    reply = remote.call("step", QKV, options=CallOptions(watch=watch))
    assert reply.ok, reply.error
    assert [s.shape(0) for s in watch.calls("attention")] == [(2, 1, 8)]
    assert costs.sizes(watch, "attention", 0, -2) == [1]
    torch.testing.assert_close(reply.value, _attention(QKV[0][:, -1:], QKV[1], QKV[2]))

    again = Watch({"attention": _attention})
    remote.call("step_recomputing", QKV, options=CallOptions(watch=again))
    assert costs.sizes(again, "attention", 0, -2) == [5]  # recomputing the past shows in the log

    inline = Watch({"attention": _attention})
    assert remote.call("step_inline", QKV, options=CallOptions(watch=inline)).ok
    assert inline.calls("attention") == []  # computed around the stand-in: no call


def test_a_method_is_answered_with_its_modules_state(remote):
    """`nn.Linear.forward` stood in for: the judge computes with the module's own parameters and logs
    the rows each projection computed."""
    watch = Watch({"nn.Linear.forward": lambda state, x: F.linear(x, state["weight"], state.get("bias"))})
    x = torch.randn(2, 5, 4)
    reply = remote.call("project", [x], options=CallOptions(watch=watch))
    assert reply.ok, reply.error
    out, weight = reply.value
    (seen,) = watch.calls("nn.Linear.forward")
    assert seen.shape(0) == (2, 1, 4) and sorted(seen.state) == ["bias", "weight"]
    torch.testing.assert_close(seen.state["weight"], weight)
    torch.testing.assert_close(out, F.linear(x[:, -1:], weight, seen.state["bias"]))
    assert remote.call("project", [x]).ok  # put back after the call: the notebook's own Linear again


def test_a_keyed_answer_catches_a_call_made_for_show(remote):
    """The stand-in called with the expected shapes and fake data, the real thing inline: the log looks
    right, the value does not (the judge's answers carry its secret turn)."""
    keyed = costs.keyed(_attention, seed=3)
    want = keyed(QKV[0][:, -1:], QKV[1], QKV[2])
    honest, show = Watch({"attention": keyed}), Watch({"attention": keyed})
    good = remote.call("step", QKV, options=CallOptions(watch=honest))
    torch.testing.assert_close(good.value, want)
    bad = remote.call("step_for_show", QKV, options=CallOptions(watch=show))
    assert costs.sizes(show, "attention", 0, -2) == [1]  # the log alone is fooled
    assert not torch.allclose(bad.value, want)  # the value is not


def test_replaying_gives_the_reference_the_same_answers():
    keyed = costs.keyed(_attention, seed=3)
    ns = {"attention": _attention}
    step = types.FunctionType(
        compile("def step(q, k, v):\n    return attention(q[..., -1:, :], k, v)\n", "<ref>", "exec").co_consts[0], ns
    )
    with costs.replaying(ns, {"attention": keyed}):
        got = step(*QKV)
    assert ns["attention"] is _attention
    torch.testing.assert_close(got, keyed(QKV[0][:, -1:], QKV[1], QKV[2]))


# -- never the part being graded ------------------------------------------------------
def _stand_in():
    cfg = types.SimpleNamespace(
        scoring={"isolate_dependencies": True},
        limits={"reply_bytes": 1 << 25},
        questions=lambda a: ["DecoderBlock", "TransformerLM", "FeedForward", "positional_encoding"],
    )
    return StandIn("transformer_block", cfg)


def _wrapped(state, x):
    return ref.DecoderBlock(8, 2, 12)(x)


class _Callable:
    def __call__(self, x):
        return ref.TransformerLM(11, 8, 2, 12, 1)(x)


@pytest.mark.parametrize(
    "answers",
    [
        {"DecoderBlock": lambda x: x},  # the target itself
        {"DecoderBlock.forward": lambda state, x: x},  # a method of the target
        {"TransformerLM": lambda x: x},  # a graded class whose reference builds the target
        {"TransformerLM.forward": lambda state, x: x},  # ... or its method
        {"attention": ref.DecoderBlock},  # answered by the target's reference
        {"attention": ref.DecoderBlock.forward},  # ... or its method
        {"attention": functools.partial(ref.TransformerLM, 11)},  # ... or what runs it, wrapped
        {"attention": _wrapped},  # a function of the suite's that builds it
        {"attention": _Callable()},  # a callable object whose call runs it
    ],
    ids=lambda a: next(iter(a)),
)
def test_the_judge_never_answers_for_the_part_being_graded_by_any_path(answers):
    with pytest.raises(WatchRefused):
        Watch(answers).check("DecoderBlock", _stand_in())


def test_what_cannot_run_the_target_may_be_watched():
    Watch({"FeedForward": lambda x: x, "nn.Linear.forward": lambda s, x: x, "attention": _attention}).check(
        "DecoderBlock", _stand_in()
    )


def test_a_refused_watch_leaves_as_the_kits_fault_before_the_call(forkserver):
    r = _remote(forkserver, CODE, stand_in=_stand_in())
    try:
        with pytest.raises(WatchRefused):
            r.call("DecoderBlock", [], options=CallOptions(watch=Watch({"TransformerLM": lambda x: x})))
        assert r.client is None  # nothing was started: refused before the call
    finally:
        r.close()


# -- the battery's shapes (an assignment fills them with its own part) ----------------
FULL = "import torch\ndef full(q, k, v):\n    w = torch.softmax(q @ k.transpose(-2, -1), dim=-1)\n    return w @ v\n"


def test_the_batterys_attacks_on_the_cap_earn_nothing(forkserver):
    """The sources `cases_costs` grades whole notebooks with, run here under a cap: lifting it fails,
    catching its error returns zeros (a wrong value `within_memory` fails)."""
    from autograder.audit.hostile import cases_costs

    big = [torch.ones(1, 16384, 8) for _ in range(3)]  # a (16384, 16384) float32 score matrix: 1 GiB
    lift = cases_costs.lifting("full", FULL).replace("def full(*args", "def lifted(*args")
    catch = cases_costs.catching("full", FULL).replace("def full(*args", "def caught(*args")
    r = _remote(forkserver, FULL, lift, catch)
    try:
        assert not r.call("full", big, options=capped(256)).ok
        lifted = r.call("lifted", big, options=capped(256))
        assert not lifted.ok and lifted.raised == "RuntimeError", lifted.error
        caught = r.call("caught", big, options=capped(256))
        assert caught.ok and not caught.value.any()
    finally:
        r.close()


HELPER = """
import os, time
if os.fork() == 0:   # a helper started while the notebook loads: it never holds a call's cap
    time.sleep(60)
    os._exit(0)
"""


def test_a_process_left_from_loading_without_the_cap_fails_the_capped_call(forkserver):
    r = _remote(forkserver, CODE, HELPER)
    try:
        reply = r.call("scores", [64], options=capped(256))
        assert not reply.ok and reply.error == t("memory_cap_not_held", mb=256), reply.error
    finally:
        r.close()


# -- the suites' helpers ----------------------------------------------------------------
@pytest.fixture
def judge_cfg():
    from autograder import config
    from autograder.private.suites import checks

    cfg = config.load()
    checks.use_cfg(cfg)
    yield cfg
    checks.use_cfg(None)


def test_within_memory_fails_a_call_over_its_cap_and_a_caught_error_by_its_value(remote, judge_cfg):
    from autograder.judge.failure import Failure

    ok = costs.within_memory(remote, judge_cfg, "scores", [2048], torch.tensor(2048.0**2), memory_mb=256)
    assert ok.ok
    with pytest.raises(Failure, match="needed more than 256 MB"):
        costs.within_memory(remote, judge_cfg, "scores", [16384], torch.tensor(16384.0**2), 256, reference_mb=40)
    with pytest.raises(Failure) as caught:
        costs.within_memory(remote, judge_cfg, "catch", [16384], torch.tensor(16384.0**2), 256)
    assert "needed more" not in str(caught.value)  # it returned: its value is what fails


def test_the_log_helpers_name_a_missing_call_and_wrong_sizes(remote, judge_cfg):
    from autograder.judge.failure import Failure

    reply, watch = costs.watched_call(remote, "step", QKV, {"attention": _attention})
    costs.check_sizes(watch, "attention", 0, -2, [1], what="step")
    _, again = costs.watched_call(remote, "step_recomputing", QKV, {"attention": _attention})
    with pytest.raises(Failure, match=r"called attention with sizes \[5\] \(1\), where \[1\] \(1\)"):
        costs.check_sizes(again, "attention", 0, -2, [1], what="step")
    _, inline = costs.watched_call(remote, "step_inline", QKV, {"attention": _attention})
    with pytest.raises(Failure, match="step must call attention"):
        costs.must_call(inline, "attention", what="step")


def test_the_shapes_register_a_control_and_attacks_no_better_than_it():
    from autograder.audit.hostile import cases_costs
    from autograder.audit.hostile.cases import CASES

    n = len(CASES)
    try:
        cases_costs.memory_cap_cases("m", "any", "q", ["q", "other"], "full", FULL)
        cases_costs.call_log_cases(
            "w", "any", "q", ["q", "other"], "step", "def step(x):\n    return x\n", "def step(x):\n    return x\n"
        )
        added = {c.name: c.expect for c in CASES[n:]}
    finally:
        del CASES[n:]
    assert sorted(added) == ["m_catches_memory_error", "m_costly", "m_lifts_cap", "w_calls_for_show", "w_recomputes"]
    for name, expect in added.items():
        assert expect["questions_lose"] == ["q"] and expect["questions_keep_full"] == ["other"]
        control = "m_costly" if name.startswith("m_") else "w_recomputes"
        assert expect.get("not_above") == (None if name == control else control)

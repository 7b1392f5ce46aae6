"""The shapes drill of classic_attention: the drill's answer cell (words the judge
reads without running them), the fixed function and the student's regression
test run against broken functions through the judge's stand-ins.

Real reader (in process and through its limited helper), real judge and worker,
real torch: the vocabulary against the provided function, the reader's reasons,
the judge's shape check of what the helper sends, what `proxies.exposes`
counts as discriminating inputs, the answers kept out of both student editions,
and grades of regression tests that pass, miss a variant, or spot the stand-in.
"""

import ast
import inspect
import json
from pathlib import Path

import pytest
import torch

from autograder import config, declarations
from autograder.audit.catalog import entries, fill, fill_reference, reference_sources, reference_typed
from autograder.judge import by_hand, proxies
from autograder.judge.notebook import Cell, Submission
from autograder.judge.reader import SubmissionError, _submission_dict, read_bytes, read_file
from autograder.judge.remote import Remote
from autograder.private.assignments.classic_attention import drill
from autograder.private.solutions import classic_attention as ca
from conftest import EDITIONS, ROOT, grade, limits, template
from conftest import code_cell as _code
from conftest import notebook as _nb

CFG = config.load(ROOT / "grading.yml")
CA = "classic_attention"
FORM = by_hand.Form.from_data("shapes_drill", declarations.typed_forms()["shapes_drill"])
LIMITS = CFG.limits
RIGHT = 'wrong_tensor = "W"\nright_shape = ("d_h", "d_s")\nfix = "transpose"'


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


# -- the vocabulary and the reader --------------------------------------------------------
def test_the_drill_vocabulary_is_the_provided_functions_names_and_the_contracts_sizes():
    tree = ast.parse(inspect.getsource(ca.broken_general_attention)).body[0]
    names = [a.arg for a in tree.args.args]
    names += [t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    assert set(FORM.words["wrong_tensor"]) == set(names)
    answer = ca.BY_HAND["shapes_drill"]
    assert answer["wrong_tensor"] in FORM.words["wrong_tensor"] and answer["fix"] in FORM.words["fix"]
    assert all(s in FORM.words["right_shape"] for s in answer["right_shape"])
    assert CFG.questions(CA)["shapes_drill"] > 0 and "shapes_drill" in {
        f.question for f in by_hand.forms(declarations.typed_forms())
    }


def test_the_public_wheel_carries_the_declared_forms_and_reads_them_without_the_private_root(tmp_path, monkeypatch):
    """`check` in a student's copy (no private root) reads typed cells by the forms the grade
    uses: the build writes the declarations into the wheel, and declarations reads that copy."""
    from autograder import layout
    from autograder.build.public import public_files

    declared = declarations.typed_forms()
    assert "shapes_drill" in declared and declared["shapes_drill"]["words"]["fix"]
    copy = public_files()[f"autograder/{layout.PUBLIC_TYPED}"]
    assert json.loads(copy) == declared
    (tmp_path / layout.PUBLIC_TYPED).write_bytes(copy)
    monkeypatch.setattr(layout, "PACKAGE", tmp_path)
    monkeypatch.setattr(layout, "ASSIGNMENTS", tmp_path / "no-private-root")
    assert declarations.names() == [] and declarations.typed_forms() == declared
    (tmp_path / layout.PUBLIC_TYPED).unlink()
    assert declarations.typed_forms() == {}


@pytest.mark.slow  # writes the public part out and starts a fresh interpreter and the reader's helper
def test_the_public_part_reads_the_drill_cell_as_the_grade_does(tmp_path):
    """The public part alone (no private root, as the student's wheel) reads a drill answer
    into the same plain data the judge reads with the private root."""
    import subprocess
    import sys

    from autograder.build.public import public_files

    public = tmp_path / "public"
    for name, data in public_files().items():
        (public / name).parent.mkdir(parents=True, exist_ok=True)
        (public / name).write_bytes(data)
    nb = tmp_path / "hw.ipynb"
    nb.write_text(json.dumps(_nb(_code("import torch"), _code(f"{FORM.mark}\n{RIGHT}\n"))))
    script = (
        "import json, sys\n"
        "from autograder import layout\n"
        "from autograder.judge.notebook import load_submission\n"
        "assert not layout.has_private()\n"
        f"print(json.dumps(load_submission(sys.argv[1], [{CA!r}]).typed))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(nb)], cwd=public, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    public_read = json.loads(proc.stdout)
    assert public_read == read_file(nb, [CA], limits=LIMITS)["typed"]
    assert public_read["shapes_drill"]["answers"]["fix"] == "transpose"


@pytest.mark.parametrize(
    "text, key",
    [
        ("wrong_tensor = W", "by_hand_word_name"),
        ('wrong_tensor = "Q"', "by_hand_word_unknown"),
        ('wrong_tensor = "w"', "by_hand_word_unknown"),  # case matters: the name as written
        ('right_shape = "d_h"', "by_hand_word_shape"),
        ('right_shape = ("d_h", "d_s", "d_h", "d_s", "d_h")', "by_hand_word_shape"),
        ('right_shape = ("d_h", 3)', "by_hand_word_not_number"),
        ('fix = ["transpose"]', "by_hand_word_one"),
        ("fix = 1", "by_hand_word_not_number"),
        ('fix = "trans" + "pose"', "by_hand_word_operator"),
        ('fix = f"transpose"', "by_hand_word_string"),
        ('fix = str("transpose")', "by_hand_call"),
        ('answer = "W"', "by_hand_word_target"),
        ("import os", "by_hand_word_statement"),
        ('fix = "transpose"\nfix = "reshape"', "by_hand_twice"),
        ('fix = "' + "x" * 5000 + '"', "by_hand_word_too_big"),
    ],
)
def test_a_drill_cell_that_breaks_the_rule_is_unreadable_with_its_reason(text, key):
    with pytest.raises(by_hand.Unreadable) as info:
        by_hand.parse_cell(text, FORM)
    assert info.value.key == key
    from autograder.messages import t

    line = t(key, **info.value.fields)
    assert "\n" not in line and len(line) < 300


def test_the_drill_cell_reads_as_words_through_the_limited_helper(tmp_path):
    nb = _nb(_code("import torch"), _code(f"{FORM.mark}: words\n{RIGHT}\n"), _code("x = 1", ["kit-shapes-drill"]))
    path = tmp_path / "hw.ipynb"
    path.write_text(json.dumps(nb))
    data = read_file(path, [CA], limits=LIMITS)
    typed = data["typed"]["shapes_drill"]
    assert typed["problem"] == {"key": "by_hand_word_two_cells", "fields": {"n": 2, "tag": FORM.tag}}
    nb["cells"].pop()
    path.write_text(json.dumps(nb))
    data = read_file(path, [CA], limits=LIMITS)
    assert data["typed"]["shapes_drill"]["answers"] == {
        "wrong_tensor": "W",
        "right_shape": ["d_h", "d_s"],
        "fix": "transpose",
    }
    assert "shapes_drill" in data["defined"] and data["by_hand"] is None
    plain = read_bytes(json.dumps(_nb(_code("x = 1"))).encode(), "hw.ipynb", LIMITS)
    assert plain["typed"] == {}


def test_the_judge_refuses_typed_answers_of_another_shape_than_the_reader_gives():
    # the helper gets the declared forms as plain data (read_file sends them); the judge checks against them
    typed = declarations.typed_forms()
    good = read_bytes(json.dumps(_nb(_code(f"{FORM.mark}\n{RIGHT}"))).encode(), "hw.ipynb", LIMITS, typed=typed)
    assert read_bytes(json.dumps(_nb(_code(f"{FORM.mark}\n{RIGHT}"))).encode(), "hw.ipynb", LIMITS)["typed"] == {}
    assert (
        _submission_dict(json.loads(json.dumps(good)), "hw.ipynb")["typed"]["shapes_drill"]["answers"]["fix"]
        == "transpose"
    )
    for forged in (
        {
            "shapes_drill": dict(
                good["typed"]["shapes_drill"], answers={"wrong_tensor": "rm -rf", "right_shape": None, "fix": None}
            )
        },
        {
            "shapes_drill": dict(
                good["typed"]["shapes_drill"], answers={"wrong_tensor": None, "right_shape": ["d_h"] * 9, "fix": None}
            )
        },
        {"by_hand": good["typed"]["shapes_drill"]},
        ["shapes_drill"],
    ):
        bad = json.loads(json.dumps(good))
        bad["typed"] = forged
        with pytest.raises(SubmissionError):
            _submission_dict(bad, "hw.ipynb")


@pytest.mark.parametrize("lang", EDITIONS)
def test_each_edition_has_one_drill_cell_with_no_answer_in_it(lang):
    nb = template(CA, lang)
    marked = [
        (_src(c), c)
        for c in nb["cells"]
        if c["cell_type"] == "code" and by_hand.is_marked(_src(c), c["metadata"].get("tags", []), FORM)
    ]
    assert len(marked) == 1 and marked[0][0].startswith(FORM.mark) and FORM.tag in marked[0][1]["metadata"]["tags"]
    assert by_hand.parse_cell(marked[0][0], FORM) == {"wrong_tensor": None, "right_shape": None, "fix": None}
    provided = [_src(c) for c in nb["cells"] if "kit-provided" in c["metadata"].get("tags", [])]
    assert len(provided) == 1 and "def broken_general_attention(" in provided[0]
    assert not any("def fixed_general_attention" in _src(c) and "W.T" in _src(c) for c in nb["cells"])


def test_the_reference_fills_the_drill_cell_and_entries_spread_over_the_drills_questions():
    nb = fill_reference(template(CA), CA)
    src = next(_src(c) for c in nb["cells"] if FORM.tag in c["metadata"].get("tags", []))
    assert by_hand.parse_cell(src, FORM) == {"wrong_tensor": "W", "right_shape": ["d_h", "d_s"], "fix": "transpose"}
    assert set(reference_typed(CA)) == {"shapes_drill"} and "by_hand" not in reference_typed(CA)
    drill_qs = ("shapes_drill", "fixed_general_attention", "test_attention_shapes")
    mine = [e for e in entries(CA) if set(e.functions) & set(drill_qs)]
    buggy = [e for e in mine if not e.correct]
    assert len(buggy) >= 8 and sum(e.correct for e in mine) >= 2
    for q in drill_qs:
        assert sum(e.questions == [q] for e in buggy) >= 2, q
    with pytest.raises(ValueError, match="kit-shapes-drill"):
        fill({"cells": []}, {}, {"shapes_drill": RIGHT})
    assert {"fixed_general_attention", "test_attention_shapes"} <= set(reference_sources(CA))
    assert "broken_general_attention" not in reference_sources(CA)


# -- the stand-ins: what counts as discriminating inputs -----------------------------------
def _inputs(B, T_dec, T_enc, d_s, d_h, mask=True):
    args, kwargs = drill.inputs(B, T_dec, T_enc, d_s, d_h, seed=5, mask=mask)
    return args, kwargs


def test_exposes_counts_only_inputs_on_which_the_variant_answers_otherwise():
    tol = CFG.data["tolerances"]
    generic, square = _inputs(2, 3, 5, 4, 6), _inputs(4, 4, 4, 5, 5)
    ref = ca.fixed_general_attention
    for name in drill.HIDDEN_VARIANTS:
        fn = drill.VARIANTS[name]
        assert proxies.exposes([generic], fn, ref, tol), name  # sizes all different expose every hidden variant
        assert not proxies.exposes([generic], ref, ref, tol)
    # the provided bug raises on sizes all different: a crash exposes nothing (any call shows it) ...
    assert not proxies.exposes([generic], ca.broken_general_attention, ref, tol)
    assert proxies.exposes([generic], ca.broken_general_attention, ref, tol, values=False, raising=True)
    # ... it fits when d_s == d_h and only its values tell it (W here is not symmetric)
    assert proxies.exposes([square], ca.broken_general_attention, ref, tol)
    assert not proxies.exposes([square], ca.broken_general_attention, ref, tol, values=False)
    symmetric = ([square[0][0], square[0][1], torch.eye(5, dtype=torch.float64)], square[1])
    assert not proxies.exposes([symmetric], ca.broken_general_attention, ref, tol)
    # inputs outside the contract (the reference itself raises) tell nothing
    assert not proxies.exposes([([torch.ones(3)], {})], drill.VARIANTS["softmax_over_steps"], ref, tol)
    assert not proxies.exposes([], drill.VARIANTS["softmax_over_steps"], ref, tol)


def test_hidden_variants_never_raise_where_the_reference_runs_and_answer_wrongly_where_their_bug_fits():
    """A hidden variant that raised would be caught by any call, an assertion or none: each
    answers wherever a correct function runs (sizes of 1, masks that broadcast, none, all
    False, float32), and on the sizes where its bug fits it is wrong in values only."""
    ref = ca.fixed_general_attention
    tol = CFG.data["tolerances"]
    gen = torch.Generator().manual_seed(7)
    ran = 0
    for k in range(300):
        B, T_dec, T_enc, d_s, d_h = (int(x) for x in torch.randint(1, 5, (5,), generator=gen))
        dtype = (torch.float32, torch.float64)[k % 2]
        args = [
            torch.randn(B, T_dec, d_s, generator=gen, dtype=dtype),
            torch.randn(B, T_enc, d_h, generator=gen, dtype=dtype),
            torch.randn(d_s, d_h, generator=gen, dtype=dtype),
        ]
        mask = (
            None,
            torch.rand(B, T_enc, generator=gen) > 0.3,
            torch.zeros(B, T_enc, dtype=torch.bool),
            torch.rand(1, T_enc, generator=gen) > 0.5,
            torch.rand(T_enc, generator=gen) > 0.5,
        )[k % 5]
        try:
            ref(*args, mask)
        except RuntimeError:
            continue
        ran += 1
        for name in drill.HIDDEN_VARIANTS:
            drill.VARIANTS[name](*args, mask)  # raises nothing
    assert ran > 150
    fits = {
        "batch_and_steps_swapped": (3, 3, 5, 4, 6),
        "softmax_over_steps": (2, 3, 5, 4, 6),
        "context_from_projected": (2, 3, 5, 4, 4),
        "scores_transposed": (2, 4, 4, 3, 5),
    }
    assert set(fits) == set(drill.HIDDEN_VARIANTS)
    for name, size in fits.items():
        calls = [_inputs(*size)]
        assert proxies.exposes(calls, drill.VARIANTS[name], ref, tol), name
        assert not proxies.exposes(calls, drill.VARIANTS[name], ref, tol, values=False), name


def test_only_an_assertion_of_the_test_after_an_answer_is_a_catch():
    from autograder.judge.remote import Reply, _error_line, raised_type

    def reply(kind, message=""):  # a failed call as the judge reads the worker's report of it
        report = {"type": kind, "message": message, "where": {"cell": 7, "line": 3, "function": "test_shapes"}}
        return Reply(False, error=_error_line(report), raised=raised_type(report))

    assert proxies.failed_by_assertion(reply("AssertionError", "shapes"))
    assert proxies.failed_by_assertion(reply("AssertionError"))
    for kind in ("RuntimeError", "IndexError", "AssertionErrorish", "ValueError"):
        assert not proxies.failed_by_assertion(reply(kind, "AssertionError")), kind
    # words alone, however they read, are no report of an AssertionError
    said = reply("AssertionError").error
    assert not proxies.failed_by_assertion(Reply(False, error=said)) and not proxies.failed_by_assertion(None)
    rec = proxies.Recorder(ca.broken_general_attention, CFG.limits["reply_bytes"])
    square, generic = _inputs(2, 3, 5, 4, 4), _inputs(2, 3, 5, 4, 6)
    assert rec({"name": proxies.NAME, "args": square[0], "kwargs": square[1]}, 1)["ok"] and not rec.last_raised
    assert not rec({"name": proxies.NAME, "args": generic[0], "kwargs": generic[1]}, 2)["ok"] and rec.last_raised
    assert rec({"name": proxies.NAME, "args": square[0], "kwargs": square[1]}, 3)["ok"] and not rec.last_raised


def test_a_recorder_answers_with_its_function_keeps_the_inputs_and_stops_a_flood():
    args, kwargs = _inputs(2, 3, 5, 4, 6)
    rec = proxies.Recorder(ca.broken_general_attention, CFG.limits["reply_bytes"])
    reply = rec({"name": proxies.NAME, "args": args, "kwargs": kwargs}, 1)
    assert reply["ok"] is False and "RuntimeError" in reply["error"] and len(rec.calls) == 1
    rec = proxies.Recorder(ca.fixed_general_attention, CFG.limits["reply_bytes"])
    reply = rec({"name": proxies.NAME, "args": args, "kwargs": kwargs}, 2)
    assert reply["ok"] and [tuple(v.shape) for v in reply["value"]] == [(2, 3, 6), (2, 3, 5)]
    assert not rec({"name": proxies.NAME, "args": args, "kwargs": kwargs}, 10_000)["ok"]
    assert not rec({"name": proxies.NAME, "args": "x", "kwargs": {}}, 3)["ok"]
    huge = [torch.zeros(1, 1, 4), torch.zeros(1, 4000, 4), torch.zeros(4, 4)]
    assert not proxies.Recorder(ca.fixed_general_attention, 1000)({"args": huge, "kwargs": {}}, 1)["ok"]


# -- each run of the student's test in a worker of its own -----------------------------------
# Every kind of state a call can leave for the next one: a module global, an attribute on a
# function, torch's RNG (a seed set by the call), a file in the temporary folder and one in the
# working directory. `carried()` says which of them an earlier call left, then leaves them all.
CARRIES = """
import os, tempfile
import torch

_runs = []


def carried():
    marks = [os.path.join(tempfile.gettempdir(), "kit-mark"), "kit-mark"]
    seen = [bool(_runs), hasattr(carried, "seen"), torch.initial_seed() == 4242]
    seen += [os.path.exists(m) for m in marks]
    _runs.append(1)
    carried.seen = True
    torch.manual_seed(4242)
    for m in marks:
        open(m, "w").close()
    return torch.tensor(seen)
"""


@pytest.mark.slow  # a fork server and three notebook loads
def test_a_fresh_call_sees_nothing_an_earlier_call_left_and_leaves_the_shared_worker_alone(forkserver):
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, CARRIES, CARRIES, None, None)])
    remote = Remote(sub, "", limits(cpu_seconds_per_call=3, load_seconds=30), forkserver=forkserver)
    try:
        first = remote.call("carried")
        fresh = [remote.call_fresh("carried") for _ in range(2)]
        shared = remote.call("carried")
    finally:
        remote.close()
    assert first.ok and not first.value.any(), first
    assert all(r.ok and not r.value.any() for r in fresh), fresh  # no kind of state reaches a fresh call
    # the shared worker kept what its own first call left (each kind can carry), and nothing of the fresh calls'
    assert shared.ok and shared.value.all(), shared


# -- the hidden suites, through the real judge ----------------------------------------------
def _graded(tmp_path, test_source=None, fixed_source=None, lines=RIGHT):
    sources = reference_sources(CA)
    if test_source is not None:
        sources["test_attention_shapes"] = test_source
    if fixed_source is not None:
        sources["fixed_general_attention"] = fixed_source
    nb = fill(template(CA), sources, {"shapes_drill": lines})
    path = tmp_path / "hw.ipynb"
    path.write_text(json.dumps(nb))
    return grade(path, cfg=CFG, lang="en", pytest_args=("-k", "test_test_attention_shapes or test_shapes_drill"))


TEST_SQUARE = """def test_attention_shapes(attention):
    context, weights = attention(torch.randn(3, 3, 4), torch.randn(3, 5, 4), torch.randn(4, 4))
    assert context.shape == (3, 3, 4) and weights.shape == (3, 3, 5)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 3))
"""
TEST_SPOTS = """def test_attention_shapes(attention):
    assert attention.__name__ != "attention", "a stand-in"
"""


@pytest.mark.slow
def test_a_regression_test_on_square_sizes_misses_the_bugs_that_fit_them(tmp_path):
    result = _graded(
        tmp_path, TEST_SQUARE, lines='wrong_tensor = "projected"\nright_shape = ("d_s", "d_h")\nfix = "transpose"'
    )
    q = result.questions["test_attention_shapes"]
    text = "\n".join(q.lines)
    # passes a correct function and the fix; misses the provided bug and the batch/steps swap (B == T_dec);
    # catches the softmax over steps, the projected context (T_dec != T_enc... d_s == d_h: missed) and the transposed scores
    assert 0 < q.score < CFG.questions(CA)["test_attention_shapes"], text
    assert "passed on the provided broken_general_attention" in text and "d_s == d_h" in text
    d = result.questions["shapes_drill"]
    assert d.score == pytest.approx(CFG.questions(CA)["shapes_drill"] / 3, abs=0.01), d.lines
    assert "`projected` is what the faulty line makes" in "\n".join(d.lines)
    assert '"W"' not in "\n".join(d.lines) and "d_h, d_s" not in "\n".join(d.lines)


@pytest.mark.slow
def test_a_regression_test_that_spots_the_stand_in_earns_nothing(tmp_path):
    result = _graded(tmp_path, TEST_SPOTS)
    q = result.questions["test_attention_shapes"]
    assert q.score == 0, q.lines
    assert "failed on a correct attention function" in "\n".join(q.lines)
    assert result.questions["shapes_drill"].score == CFG.questions(CA)["shapes_drill"]


def test_a_recorder_answers_backward_passes_with_the_functions_own_gradients():
    args, kwargs = _inputs(2, 3, 5, 4, 6)
    rec = proxies.Recorder(ca.fixed_general_attention, CFG.limits["reply_bytes"])
    cot = [torch.ones(2, 3, 6, dtype=torch.float64), None]
    reply = rec({"name": proxies.NAME, "args": args, "kwargs": kwargs, "grad_outputs": cot}, 1)
    leaves = [a.clone().requires_grad_(True) for a in args]
    context, _ = ca.fixed_general_attention(*leaves, **kwargs)
    context.sum().backward()
    assert reply["ok"] and all(torch.allclose(g, leaf.grad) for g, leaf in zip(reply["grads"], leaves))
    assert rec.calls == []  # a backward pass is not a new question the test asks


TEST_NO_ASSERT = """def test_attention_shapes(attention):
    context, weights = attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))
    print(context.shape, weights.shape)
"""
TEST_SHAPES_ONLY = """def test_attention_shapes(attention):
    B, T_dec, T_enc, d_s, d_h = 2, 3, 5, 4, 6
    context, weights = attention(torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h))
    assert context.shape == (B, T_dec, d_h)
    assert weights.shape == (B, T_dec, T_enc)
"""

# Shapes, row sums and the formula's values: first on sizes that all differ (the provided function
# crashes there), then on d_s == d_h and batch_size == T_dec.
TEST_CRASH_FIRST = """def test_attention_shapes(attention):
    for B, T_dec, T_enc, d_s, d_h in ((2, 3, 5, 4, 6), (3, 3, 5, 4, 4)):
        s, H, W = torch.randn(B, T_dec, d_s), torch.randn(B, T_enc, d_h), torch.randn(d_s, d_h)
        context, weights = attention(s, H, W)
        assert context.shape == (B, T_dec, d_h) and weights.shape == (B, T_dec, T_enc)
        assert torch.allclose(weights.sum(-1), torch.ones(B, T_dec))
        expected = torch.softmax(torch.einsum("btd,de,bie->bti", s, W, H), dim=-1)
        assert torch.allclose(weights, expected, atol=1e-5) and torch.allclose(context, expected @ H, atol=1e-5)
"""
# A test that remembers its runs through every kind of state a worker keeps (a global, an
# attribute, torch's RNG, a file) and fails, by its own assert on sizes that show every
# variant, on any run but its first.
TEST_REMEMBERS = """def test_attention_shapes(attention):
    import os, tempfile
    mark = os.path.join(tempfile.gettempdir(), "kit-mark")
    seen = hasattr(test_attention_shapes, "seen") or os.path.exists(mark) or torch.initial_seed() == 4242
    test_attention_shapes.seen = True
    open(mark, "w").close()
    torch.manual_seed(4242)
    attention(torch.randn(2, 3, 5), torch.randn(2, 4, 5), torch.randn(5, 5))
    assert not seen, "not my first run"
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, lost",
    [
        (TEST_NO_ASSERT, "all"),  # passes a correct function and the fix, catches nothing: the passes earn nothing
        (TEST_SHAPES_ONLY, "part"),  # catches the variants whose shapes are wrong on its sizes, not the provided bug
        (None, "none"),  # the reference's test: values on d_s == d_h, shapes on sizes all different
        (TEST_CRASH_FIRST, "none"),  # its asserts catch every hidden variant: the provided function's crash counts
        (TEST_REMEMBERS, "remembers"),  # passes only on its first run: every run is a first one, it catches nothing
    ],
)
def test_a_regression_test_earns_only_what_its_assertions_catch(tmp_path, source, lost):
    result = _graded(tmp_path, source)
    q = result.questions["test_attention_shapes"]
    text = "\n".join(q.lines)
    full = CFG.questions(CA)["test_attention_shapes"]
    if lost == "remembers":
        assert q.score == 0, text
        assert "passed on the provided broken_general_attention" in text
    elif lost == "all":
        assert q.score == 0, text
        assert "stopped on the provided broken_general_attention with an error" in text
        assert "passed on a function whose softmax runs over the decoder steps" in text
    elif lost == "part":
        assert 0 < q.score < full, text
        assert "stopped on the provided broken_general_attention with an error" in text
        assert "a crash alone is no catch" in text
    else:
        assert q.score == full, text

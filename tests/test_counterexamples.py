"""The counterexample a failed value check shows (autograder/judge/counterexample.py):
the smallest input the judge finds where the student's function and the reference
differ, made fresh from a seed, shown with the student's output and the expected one.

The search alone (plain Python functions and a module, no worker); the feedback's place
for it; then the catalog, graded once for the whole run (conftest's `catalog_graded`,
pt-BR): every value failure of a function question and of a module question shows one,
none for the typed answers or the training run, their median size; a module bug of the
catalog in both editions; and a few entries graded here with every input the checks send
recorded: no counterexample input (nor a module's parameters) is one of them or one of
their expected outputs.
"""

import json
import re
import statistics

import pytest
import torch

from autograder import config, layout, messages
from autograder.judge import counterexample as cx
from autograder.judge import scoring, shrink
from autograder.judge.failure import Msg
from autograder.private.solutions import classic_attention as ref
from conftest import ROOT, grade, is_cause_line, is_failure_line  # grade: with this process's fork server
from ptbr import english_in

CFG = config.load(ROOT / "grading.yml")
ATOL, RTOL = CFG.tolerance(torch.float64)


def _differs(got, expected):
    return any(
        got[n].shape == e.shape and not torch.allclose(got[n].double(), e.double(), atol=ATOL, rtol=RTOL)
        for n, e in expected.items()
    )


def _reference(fn, out_names=("weights",)):
    def run(a, k):
        try:
            value = fn(*a, **k)
        except Exception:
            return None
        return dict(zip(out_names, [value] if len(out_names) == 1 else value))

    return run


def _student(fn, out_names=("weights",), calls=None):
    def run(a, k, seconds):
        if calls is not None:
            calls.append((a, k))
        try:
            value = fn(*a, **k)
        except Exception:
            return None
        return dict(zip(out_names, [value] if len(out_names) == 1 else value))

    return run


def _softmax_over_rows(scores, mask=None, dim=-1):
    return ref.masked_softmax(scores, mask, dim=0)


# -- the search ------------------------------------------------------------------------
def test_the_budget_comes_from_grading_yml():
    assert shrink.budget(CFG) == shrink.Budget(seconds=2.0, calls=30, numbers=12, decimals=3, seed=0)
    assert shrink.budget(object()) == shrink.Budget()  # no scoring section: the defaults


def test_the_search_shrinks_to_a_small_case_with_fresh_values():
    scores = torch.randn(3, 5, dtype=torch.float64)
    calls = []
    found = shrink.search_function(
        "masked_softmax",
        [scores],
        {},
        _student(_softmax_over_rows, calls=calls),
        _reference(ref.masked_softmax),
        _differs,
        shrink.budget(CFG),
    )
    assert found is not None
    (x,) = found.args
    assert x.shape == (2, 1), x.shape  # the fewest elements that still show it: two rows, one key
    assert found.largest() == 2
    assert not torch.equal(x, scores[:2, :1])  # made fresh, never sliced from the failing input
    assert x.eq(x.round()).all() and x.abs().max() <= 2  # small integers show it
    assert _differs(found.got, found.expected)
    assert found.calls == len(calls) <= 30
    again = shrink.search_function(
        "masked_softmax",
        [scores * 7],
        {},
        _student(_softmax_over_rows),
        _reference(ref.masked_softmax),
        _differs,
        shrink.budget(CFG),
    )
    assert torch.equal(again.args[0], x), "the values come from the seed, never from the failing input"


def test_a_mask_hides_one_key_and_sizes_passed_as_ints_shrink_too():
    def no_transpose(x, n_heads):  # split_heads without its transpose
        B, T, D = x.shape
        if D % n_heads:
            raise ValueError("not divisible")
        return x.reshape(B, n_heads, T, D // n_heads)

    def split(x, n_heads):
        B, T, D = x.shape
        if D % n_heads:
            raise ValueError("not divisible")
        return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)

    found = shrink.search_function(
        "split_heads",
        [torch.randn(2, 3, 20, dtype=torch.float64), 4],
        {},
        _student(no_transpose, ("heads",)),
        _reference(split, ("heads",)),
        _differs,
        shrink.budget(CFG),
    )
    assert found is not None and found.args[0].shape == (1, 2, 2) and found.args[1] == 2, found.args

    def mask_ignored(scores, mask=None, dim=-1):
        return ref.masked_softmax(scores, None, dim)

    found = shrink.search_function(
        "masked_softmax",
        [torch.randn(4, 6, dtype=torch.float64)],
        {"mask": torch.rand(4, 6) < 0.5},
        _student(mask_ignored),
        _reference(ref.masked_softmax),
        _differs,
        shrink.budget(CFG),
    )
    assert found is not None
    assert found.args[0].shape == (1, 2) and found.kwargs["mask"].tolist() == [[True, False]]


def test_no_counterexample_without_budget_or_where_the_reference_agrees():
    args = [torch.randn(3, 5, dtype=torch.float64)]
    off = shrink.Budget(calls=0)
    assert (
        shrink.search_function(
            "f", args, {}, _student(_softmax_over_rows), _reference(ref.masked_softmax), _differs, off
        )
        is None
    )
    calls = []
    agrees = shrink.search_function(
        "f",
        args,
        {},
        _student(ref.masked_softmax, calls=calls),
        _reference(ref.masked_softmax),
        _differs,
        shrink.Budget(),
    )
    assert agrees is None and len(calls) <= 3  # it gives up after the failing call's own shapes
    spent = shrink.Ledger()
    shrink.search_function(
        "f", args, {}, _student(ref.masked_softmax), _reference(ref.masked_softmax), _differs, shrink.Budget(), spent
    )
    assert spent.calls <= 3 and not spent.found


def _mha_case(sizes, seed, out_proj=True):
    """A MultiHeadAttention case as the suite's `Case.fresh` makes one (no worker here)."""
    from autograder.private.solutions import multi_head

    B, T, D, h = sizes["B"], sizes["T"], sizes["D"], sizes["n_heads"]
    if D % h:
        return None
    g = torch.Generator().manual_seed(seed)
    m = multi_head.MultiHeadAttention(D, h).double()
    state = {n: torch.randn(p.shape, generator=g, dtype=torch.float64) for n, p in m.named_parameters()}
    q = torch.randn(B, T, D, generator=g, dtype=torch.float64)

    def reference(st, a, k):
        r = multi_head.MultiHeadAttention(D, h).double()
        r.load_state_dict(st)
        if not out_proj:  # the bug: out_proj left out
            r.out_proj = torch.nn.Identity()
        return r(*a, **k)

    return shrink.ModuleCase(
        f"MultiHeadAttention({D}, {h}, bias=True)",
        {"args": [D, h]},
        state,
        [q, q, q],
        {},
        ["query", "key", "value"],
        reference,
    )


def test_a_module_search_builds_both_modules_with_the_same_fresh_parameters_and_shrinks():
    calls = []

    def student(case, seconds):  # the module without out_proj, built from the case as the worker builds it
        calls.append(case)
        buggy = _mha_case(
            {"B": 1, "T": 1, "D": case.construct["args"][0], "n_heads": case.construct["args"][1]}, 0, False
        )
        out = buggy.reference(case.state, case.args, case.kwargs)
        return dict(zip(("output", "weights"), out))

    failing = {"B": 3, "T": 5, "D": 10, "n_heads": 2}
    sent = _mha_case(failing, 123)
    found = shrink.search_module(
        "MultiHeadAttention",
        failing,
        _mha_case,
        student,
        ("output", "weights"),
        _differs,
        shrink.budget(CFG),
        sent=[*sent.args, *sent.state.values()],
    )
    assert found is not None and found.calls == len(calls) <= 30
    assert found.label == "MultiHeadAttention(1, 1, bias=True)", found.label  # the fewest features and heads
    assert [tuple(a.shape) for a in found.args] == [(1, 1, 1)] * 3
    assert all(v.eq(v.round()).all() for v in [*found.args, *found.state.values()])  # small integers show it
    assert _differs(found.got, found.expected)
    with messages.language("en"):
        shown = cx.render_module(found, shrink.budget(CFG))
    with messages.language("pt-BR"):
        pt = cx.render_module(found, shrink.budget(CFG)).lines
    en = shown.lines
    assert len(en) == 4 and en[0].startswith(
        "Smallest case found where your module differs from the reference: MultiHeadAttention(1, 1, bias=True)(query=[[["
    )
    assert en[1].startswith("Parameters (the same in your module and in the reference's): q_proj.weight=[[")
    assert en[2].startswith("Your output: output=") and en[3].startswith("Expected output: output=")
    assert pt[0].startswith("Menor caso encontrado em que o módulo difere da referência: MultiHeadAttention(")
    assert [english_in(line) for line in pt] == [[]] * 4
    assert shown.kind == "module" and shown.largest == found.largest() == 1


def test_parameters_too_many_to_show_are_counted_not_shown():
    found = shrink.ModuleFound(
        [torch.zeros(1, 1, 20)],
        {},
        {"y": torch.zeros(1)},
        {"y": torch.ones(1)},
        label="M(20)",
        state={"w": torch.zeros(20, 20), "b": torch.zeros(20)},
        arg_names=["x"],
    )
    with messages.language("en"):
        shown = cx.render_module(found, shrink.budget(CFG))
    lines = shown.lines
    assert lines[1] == (
        "Parameters: 420 numbers in 2 tensors, drawn by the grader and the same in your module and in the "
        "reference's: too many to show, so this case cannot be typed in (the search found no smaller one that "
        "shows the difference in the time it had)"
    )
    assert "..." in lines[0] and found.largest() == 400
    assert shown.largest == 20  # the parameters not shown: the input's 20 numbers are the most shown


def test_what_the_student_reads():
    assert (
        cx.show(torch.tensor([[0.12345, -0.0004], [2.0, 1e9]], dtype=torch.float64)) == "[[0.123, 0], [2, 1000000000]]"
    )
    assert cx.show(torch.tensor([[True, False]])) == "[[True, False]]"
    assert cx.show(torch.tensor(1.23456)) == "1.235"
    with messages.language("en"):
        long = cx.show(torch.arange(16.0).reshape(2, 8))
    assert long == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...] (the first 12 of 16, shape (2, 8))"
    assert "tensor(" not in long
    found = shrink.Found(
        [torch.tensor([[1.0, 0.0]])],
        {"mask": torch.tensor([[True, False]])},
        {"weights": torch.tensor([[0.5, 0.5]])},
        {"weights": torch.tensor([[1.0, 0.0]])},
    )
    names = cx.parameter_names(ref.masked_softmax, 1)
    assert names == ["scores"]
    with messages.language("en"):
        shown = cx.render("masked_softmax", names, found, shrink.budget(CFG))
    with messages.language("pt-BR"):
        pt = cx.render("masked_softmax", names, found, shrink.budget(CFG)).lines
    en = shown.lines
    assert en == (
        "Smallest input found where your function differs from the reference: "
        "masked_softmax(scores=[[1, 0]], mask=[[True, False]])",
        "Your output: weights=[[0.5, 0.5]]",
        "Expected output: weights=[[1, 0]]",
    )
    assert pt[0].startswith("Menor entrada encontrada em que a função difere da referência: masked_softmax(")
    assert [english_in(line) for line in pt] == [[], [], []]
    assert (shown.kind, shown.largest) == ("function", 2)
    assert shown.as_data() == {"kind": "function", "lines": list(en), "largest": 2}
    assert [cx.numbers_in(v) for v in (torch.zeros(3, 9), 1.25, True, "x")] == [27, 1, 1, 0]
    with pytest.raises(TypeError):
        cx.Shown(("a line",), "not a kind", 1)


def test_the_feedback_shows_it_once_under_the_likely_causes():
    bug = Msg("cause_mask_ignored")
    lines = ("Smallest input found where ...: f(x=[1])", "Your output: y=[2]", "Expected output: y=[3]")
    outcomes = {
        "test_shapes_and_values": [
            scoring.TestOutcome(
                "q",
                "test_shapes_and_values",
                "",
                False,
                "f(x) -> y: wrong. ",
                cause=bug,
                counterexample=cx.Shown(lines, "function", 1),
            ),
            scoring.TestOutcome("q", "test_shapes_and_values", "", False, "f(x) -> y: wrong. ", cause=bug),
        ],
        "test_gradients": [
            scoring.TestOutcome(
                "q", "test_gradients", "", False, "f(x): wrong too", counterexample=cx.Shown(("other",), "gradient", 1)
            )
        ],
    }
    with messages.language("en"):
        feedback = scoring._feedback(outcomes)
    got = feedback.lines
    assert got[1].startswith("Likely cause")
    assert tuple(got[2:5]) == lines and "other" not in got
    assert feedback.counterexample is not None and feedback.counterexample.lines == lines
    assert all(not is_failure_line(line) and not is_cause_line(line) for line in lines)


# -- the catalog ---------------------------------------------------------------------
# Function questions: each graded by calling the student's function on inputs (check_values)
FUNCTION_QUESTIONS = {
    "masked_softmax",
    "additive_attention",
    "dot_attention",
    "general_attention",
    "concat_attention",
    "fixed_general_attention",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "multi_head_general_attention",
    "masked_loss",
}
# Module questions: a class the worker builds and loads the judge's parameters into
MODULE_QUESTIONS = {"multi_head_attention", "encoder", "attention_decoder"}
TYPED = {"shapes_drill", "by_hand", "training_run"}


def _shown(data, question):
    """The counterexample a question's feedback shows, as results.json keeps it
    (`extra_data.feedback[].counterexample`: kind, lines, largest), or None."""
    first = next((f for f in data["extra_data"]["feedback"] if f["question"] == question), {})
    return first.get("counterexample")


def _compared(data, question):
    """What the failed value comparisons of a question's checks compared (results.json's
    `extra_data.checks[].compared`: output, gradient, dtype)."""
    return {c for r in data["extra_data"]["checks"] if r["question"] == question for c in r.get("compared", ())}


def _counterexamples(catalog_graded, questions=FUNCTION_QUESTIONS, kind="output"):
    """[(entry, question, its counterexample or None)] for every targeted question of
    `questions` of a buggy entry whose checks failed a value comparison of `kind` (a call's
    outputs, its gradients, its outputs in a lower precision)."""
    out = []
    for entry, data in catalog_graded:
        if entry.correct:
            continue
        for q in entry.questions:
            if q in questions and kind in _compared(data, q):
                out.append((entry, q, _shown(data, q)))
    return out


@pytest.mark.slow
def test_every_value_failure_of_a_function_question_shows_a_counterexample(catalog_graded):
    found = _counterexamples(catalog_graded)
    assert len(found) >= 40, len(found)  # 51 when written
    missing = [f"{e.assignment}/{e.name} ({q})" for e, q, shown in found if not shown]
    assert not missing, f"{len(missing)} of {len(found)} value failures without a counterexample: {missing}"
    assert {shown["kind"] for *_, shown in found} <= {"function", "gradient", "dtype"}
    largest = [shown["largest"] for *_, shown in found]
    assert statistics.median(largest) <= 6, sorted(largest)


@pytest.mark.slow
def test_every_value_failure_of_a_module_question_shows_a_counterexample(catalog_graded):
    found = _counterexamples(catalog_graded, MODULE_QUESTIONS)
    assert len(found) >= 10, len(found)  # 16 when written
    missing = [f"{e.assignment}/{e.name} ({q})" for e, q, shown in found if not shown]
    assert not missing, f"{len(missing)} of {len(found)} value failures without a counterexample: {missing}"
    # the module, its parameters, yours, expected
    assert all(shown["kind"] == "module" and len(shown["lines"]) == 4 for *_, shown in found)
    largest = [shown["largest"] for *_, shown in found]
    assert statistics.median(largest) <= 6, sorted(largest)


@pytest.mark.slow
def test_every_gradient_or_dtype_value_failure_of_a_function_question_shows_one(catalog_graded):
    """Outputs right and gradients wrong (dot_keys_detached: the keys detached in the scores),
    or a failure only in a lower precision: the counterexample of that kind."""
    gradients = _counterexamples(catalog_graded, kind="gradient")
    in_dtype = _counterexamples(catalog_graded, kind="dtype")
    assert any(e.name == "dot_keys_detached" for e, *_ in gradients), [e.name for e, *_ in gradients]
    missing = [f"{e.assignment}/{e.name} ({q})" for e, q, shown in gradients + in_dtype if not shown]
    assert not missing, f"{len(missing)} gradient or dtype value failures without a counterexample: {missing}"
    (shown,) = [shown for e, _, shown in gradients if e.name == "dot_keys_detached"]
    assert shown["kind"] == "gradient", shown
    assert shown["lines"][0].startswith(
        messages.t("counterexample_gradient_input", "pt-BR", call="\0").split("\0")[0]
    ), shown


@pytest.mark.slow
def test_every_failed_train_step_run_shows_a_smaller_run(catalog_graded):
    """The lab's train_step (a loss or an updated parameter off the reference's, in its one-
    or three-step run): the smallest run found, its batches and both losses."""
    start = messages.t("counterexample_train_input", "pt-BR", call="\0", batches="\0").split("\0")[0]
    found = []
    for entry, data in catalog_graded:
        if entry.correct or "train_step" not in entry.questions:
            continue
        runs = [r for r in data["extra_data"]["checks"] if r["question"] == "train_step"]
        if any(r["failed"] and r["check"] in ("test_one_step", "test_three_steps") for r in runs):
            found.append((entry.name, _shown(data, "train_step")))
    assert len(found) >= 6, found  # 7 when written
    assert all(shown and shown["kind"] == "train" for _, shown in found), found
    assert all(len(shown["lines"]) == 3 and shown["lines"][0].startswith(start) for _, shown in found), found
    yours, expected = (
        messages.t("counterexample_yours", "pt-BR", outputs=""),
        messages.t("counterexample_expected", "pt-BR", outputs=""),
    )
    assert all(
        shown["lines"][1].removeprefix(yours) != shown["lines"][2].removeprefix(expected) for _, shown in found
    ), found


@pytest.mark.slow
def test_no_counterexample_for_typed_answers_or_the_training_run(catalog_graded):
    """A typed answer or the training run shows none; a question shows at most one, in its
    output's one code block (the Markdown of `text.Code` lines), as results.json keeps it."""
    for entry, data in catalog_graded:
        for test in data["tests"]:
            shown = _shown(data, test["name"])
            if test["name"] in TYPED:
                assert shown is None, (entry.name, test["name"])
            fences = len(re.findall(r"^`{3,}", test["output"], re.M))
            assert fences == (2 if shown else 0), (entry.name, test["name"], test["output"])
            assert shown is None or test["output"].count(shown["lines"][0]) == 1, (entry.name, test["name"])
            assert shown is None or not any("tensor(" in line for line in shown["lines"])


# -- module questions, in both languages ----------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_a_module_bug_of_the_catalog_shows_a_counterexample_on_its_own_question(tmp_path, lang):
    from autograder.audit import catalog
    from autograder.audit import run as audit_run

    entry = catalog.load_entry(layout.catalog("multi_head") / "mha_no_out_proj.py")
    (path,) = audit_run.fill_catalog([entry], tmp_path, lang)
    result = grade(path, cfg=CFG, lang=lang, pytest_args=["-k", "multi_head_attention"])
    shown = result.questions["multi_head_attention"].counterexample
    assert shown is not None and shown.kind == "module", result.questions["multi_head_attention"].lines
    lines = shown.lines
    assert len(lines) == 4 and all(line in result.questions["multi_head_attention"].lines for line in lines)
    with messages.language(lang):
        starts = [
            messages.t(k, **{f: "\0"}).split("\0")[0]
            for k, f in (
                ("counterexample_module_input", "call"),
                ("counterexample_parameters", "parameters"),
                ("counterexample_yours", "outputs"),
                ("counterexample_expected", "outputs"),
            )
        ]
    assert [line.startswith(start) for line, start in zip(lines, starts)] == [True] * 4, lines
    assert "MultiHeadAttention(1, 1, bias=True)(query=" in lines[0]  # one feature and one head show it
    if lang == "pt-BR":
        assert [english_in(line) for line in lines] == [[]] * 4
    for q, r in result.questions.items():  # on its own question only
        assert q == "multi_head_attention" or r.counterexample is None, q


# -- gradients and lower precisions, in both languages ---------------------------------
def _starts(lang, *keys):
    with messages.language(lang):
        return [messages.t(k, call="\0", outputs="\0", dtype="\0").split("\0")[0] for k in keys]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_a_gradient_bug_shows_the_gradients_of_a_small_case(tmp_path, lang):
    """dot_keys_detached: right outputs; the gradients of out.sum() shown, the student's and
    the reference's, on a small fresh case (the decoder state's the same in both)."""
    from autograder.audit import catalog
    from autograder.audit import run as audit_run

    entry = catalog.load_entry(layout.catalog("classic_attention") / "dot_keys_detached.py")
    (path,) = audit_run.fill_catalog([entry], tmp_path, lang)
    result = grade(path, cfg=CFG, lang=lang, pytest_args=["-k", "dot_attention"])
    shown = result.questions["dot_attention"].counterexample
    assert shown is not None and shown.kind == "gradient", result.questions["dot_attention"].lines
    lines = shown.lines
    starts = _starts(
        lang, "counterexample_gradient_input", "counterexample_gradient_yours", "counterexample_gradient_expected"
    )
    assert [line.startswith(start) for line, start in zip(lines, starts)] == [True] * 3, lines
    yours, expected = (line.split(": ", 1)[1] for line in lines[1:])
    assert yours != expected and yours.split("encoder_states=")[0] == expected.split("encoder_states=")[0]
    assert shown.largest <= 6, lines
    if lang == "pt-BR":
        assert [english_in(line) for line in lines] == [[]] * 3


HALF_ONLY = '''"""
bug: (a stand-in for a bug that shows only in a lower precision) the scores scaled by 1.5 in float16 and bfloat16
functions: [masked_softmax]
questions: [masked_softmax]
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if scores.dtype in (torch.float16, torch.bfloat16):
        scores = scores * 1.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=dim)
    return torch.nan_to_num(weights, nan=0.0)
'''


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_a_bug_only_in_float16_shows_a_case_sent_in_float16(tmp_path, lang):
    """Right in float64 and float32, wrong in float16 and bfloat16: the dtype check's
    counterexample names the dtype and shows the inputs as they round to it, once."""
    from autograder.audit import catalog
    from autograder.audit import run as audit_run

    source = tmp_path / "classic_attention" / "catalog" / "half_only.py"  # a catalog entry's place
    source.parent.mkdir(parents=True)
    source.write_text(HALF_ONLY)
    (path,) = audit_run.fill_catalog([catalog.load_entry(source)], tmp_path, lang)
    result = grade(path, cfg=CFG, lang=lang, pytest_args=["-k", "masked_softmax"])
    feedback = result.questions["masked_softmax"].lines
    shown = result.questions["masked_softmax"].counterexample
    assert shown is not None and shown.kind == "dtype", feedback
    lines = shown.lines
    (start,) = _starts(lang, "counterexample_dtype_input")
    assert len(lines) == 3 and lines[0].startswith(start) and "float16" in lines[0].split(":")[0], feedback
    assert sum(line.startswith(start) for line in feedback) == 1
    compared = {c for r in result.questions["masked_softmax"].checks for c in r.get("compared", ())}
    assert compared == {"dtype"}, result.questions["masked_softmax"].checks
    with messages.language(lang):  # no cause from a row sum that float16 rounds off 1
        assert not any(messages.t("cause_marker") in line for line in feedback), feedback
    if lang == "pt-BR":
        assert [english_in(line) for line in lines] == [[]] * 3


# -- never a hidden input ------------------------------------------------------------
CHOSEN = (
    ("classic_attention", "additive_no_tanh"),
    ("scaled_dot_product", "sdpa_scaled_by_dk"),
    ("multi_head", "split_heads_view_no_transpose"),
    ("seq2seq_attention", "masked_loss_divided_by_batch"),
    ("multi_head", "mha_mask_inverted"),
    ("seq2seq_attention", "real_d2l_encoder_gru_over_padding"),
    ("seq2seq_attention", "decoder_query_after_step"),
    ("classic_attention", "dot_keys_detached"),  # a gradient counterexample
)


@pytest.mark.slow
def test_no_counterexample_input_is_a_hidden_input_or_its_expected_output(tmp_path, monkeypatch):
    """Neither a function's inputs nor a module's inputs and parameters: each tensor shown is
    compared with every tensor the checks sent to the worker (inputs and parameters) and
    every expected output they compared with, for the whole grading. A module's mask,
    lengths or tokens alone may equal a hidden one (a causal mask of T positions is the same
    in every case of T positions): its float tensors never, nor all its inputs at once."""
    from autograder.audit import catalog
    from autograder.audit import run as audit_run
    from autograder.judge.remote import CallOptions, Remote
    from autograder.private.suites import calls, value_checks

    hidden, found = [], []
    each_call = []  # each call's tensor inputs
    searching = []
    real_call, real_reference, real_check = Remote.call, calls.reference_outputs, value_checks.check_outputs
    real_search, real_module_search = shrink.search_function, shrink.search_module
    real_assert = value_checks.assert_close

    def tensors(value):
        if isinstance(value, torch.Tensor):
            return [] if value.device.type == "meta" else [value.detach().cpu()]  # meta: no values
        if isinstance(value, (list, tuple)):
            return [x for v in value for x in tensors(v)]
        if isinstance(value, dict):
            return [x for v in value.values() for x in tensors(v)]
        return []

    def call(self, target, args=(), kwargs=None, options=CallOptions()):
        hidden.extend(tensors([list(args), kwargs or {}, options.state or {}]))
        each_call.append(tensors([list(args), kwargs or {}]))
        return real_call(self, target, args, kwargs, options)

    def reference_outputs(*a, **k):
        out = real_reference(*a, **k)
        if not searching:
            hidden.extend(tensors(out))
        return out

    def check_outputs(got, expected, *a, **k):
        hidden.extend(tensors(expected))
        return real_check(got, expected, *a, **k)

    def assert_close(got, expected, *a, **k):  # the gradients' expected values too
        if not searching:
            hidden.extend(tensors(expected))
        return real_assert(got, expected, *a, **k)

    def searched(real):
        def search(*a, **k):
            searching.append(1)
            try:
                result = real(*a, **k)
            finally:
                searching.pop()
            if result is not None:
                found.append(result)
            return result

        return search

    monkeypatch.setattr(Remote, "call", call)
    monkeypatch.setattr(calls, "reference_outputs", reference_outputs)
    monkeypatch.setattr(value_checks, "check_outputs", check_outputs)
    monkeypatch.setattr(value_checks, "assert_close", assert_close)
    monkeypatch.setattr(shrink, "search_function", searched(real_search))
    monkeypatch.setattr(shrink, "search_module", searched(real_module_search))
    entries = [catalog.load_entry(layout.catalog(a) / f"{n}.py") for a, n in CHOSEN]
    for path in audit_run.fill_catalog(entries, tmp_path):
        result = grade(path, cfg=CFG, lang="en", pytest_args=["-k", "not training_run"])  # no lab training here
        assert result.status == "graded", result.internal_errors
    assert len(found) >= len(CHOSEN), len(found)
    assert sum(isinstance(f, shrink.ModuleFound) for f in found) >= 3
    assert len(hidden) > 100

    def equal(x, y):
        return x.shape == y.shape and x.dtype == y.dtype and torch.equal(x, y)

    for f in found:
        module = isinstance(f, shrink.ModuleFound)
        for x in tensors([f.args, f.kwargs, f.state if module else {}]):
            if module and not x.is_floating_point():
                continue
            same = [h for h in hidden if equal(h, x)]
            assert not same, f"a counterexample input equals a hidden input or expected output: {x.tolist()}"
        given = tensors([f.args, f.kwargs])
        for sent in each_call:
            assert not (len(sent) == len(given) and all(map(equal, sent, given))), "a hidden call's inputs"


def test_the_messages_exist_in_both_languages():
    cat = messages.catalog()
    data = json.loads(json.dumps(cat))
    gradient = ("counterexample_gradient_yours", "counterexample_gradient_expected")
    inputs = ("counterexample_input", "counterexample_module_input", "counterexample_gradient_input")
    inputs += ("counterexample_dtype_input", "counterexample_train_input")
    for key in (*inputs, "counterexample_yours", "counterexample_expected", *gradient, "counterexample_first"):
        assert set(data[key]) == {"en", "pt-BR"}, key


# -- likely causes for what real training-lab code does ---------------------------------
LAB_CAUSES = {  # catalog entry: (its question, the cause it must get)
    "real_pytorch_tutorial_decoder_log_softmax": ("attention_decoder", "cause_lab_logits_log_probs"),
    "real_bentrevett_train_step_teacher_forcing_ratio": ("train_step", "cause_lab_teacher_forcing_ratio"),
    "train_step_fed_next_token": ("train_step", "cause_lab_no_shift_next"),
    "train_step_no_shift": ("train_step", "cause_lab_no_shift"),
    "masked_loss_returns_item": ("masked_loss", "cause_python_number"),
    "train_step_mask_all_positions": ("train_step", "cause_lab_mask_all"),
}


@pytest.mark.slow
def test_the_training_lab_causes_and_only_when_their_alternative_explains_the_output(catalog_graded):
    seen = {}
    for entry, data in catalog_graded:
        if entry.assignment == "seq2seq_attention" and entry.name in LAB_CAUSES:
            question, key = LAB_CAUSES[entry.name]
            causes = data["extra_data"]["causes"]
            keys = {c["key"] for c in causes if question in c["questions"]}
            seen[entry.name] = keys
            assert key in keys, (entry.name, [c["text"] for c in causes])
            if key != "cause_lab_mask_all":  # the padding cause only where counting the padding gives the losses
                assert "cause_lab_mask_all" not in keys, (entry.name, keys)
    assert set(seen) == set(LAB_CAUSES), set(LAB_CAUSES) - set(seen)


def test_outputs_show_as_many_decimals_as_their_difference_needs():
    found = shrink.Found(
        [torch.tensor([1.0])],
        {},
        {"y": torch.tensor([0.50000001], dtype=torch.float64)},
        {"y": torch.tensor([0.5], dtype=torch.float64)},
    )
    with messages.language("en"):
        lines = cx.render("f", ["x"], found, shrink.budget(CFG)).lines
    assert lines[1:] == ("Your output: y=[0.50000001]", "Expected output: y=[0.5]")

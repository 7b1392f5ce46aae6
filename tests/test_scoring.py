"""How a score is made: properties counted once, evidence devices, weights,
dependent functions graded once, and feedback that says each cause once."""

import ast
import json

import pytest

from autograder import config, layout, messages
from autograder.audit.catalog import fill_entry, load_entry
from autograder.judge import scoring
from autograder.judge.failure import Msg
from autograder.judge.form import LABEL_CHARS
from autograder.judge.scoring import TestOutcome
from conftest import ROOT, grade, is_failure_line, suite_files, suite_skeleton, template

CFG = config.load(ROOT / "grading.yml")


def _notebook(tmp_path, entry_path):
    assignment, name = entry_path.split("/")
    entry = load_entry(layout.catalog(assignment) / name)
    path = tmp_path / f"{entry.name}.ipynb"
    path.write_text(json.dumps(fill_entry(template(entry.assignment), entry)))
    return path


def _outcomes(*rows):
    """Rows of (test, case, passed, message, evidence): a message is its symptom's words, or
    (words, the cause's catalog key)."""
    return [
        TestOutcome("causal_mask", t, case, ok, *(msg if isinstance(msg, tuple) else (msg, None)), evidence=ev)
        for t, case, ok, msg, ev in rows
    ]


def _said(symptom, key):  # a symptom and its likely cause, as checks.caused leaves them
    return (f"{symptom}. ", Msg(key))


def test_evidence_cases_are_reported_and_never_scored():
    base = [
        ("test_values", "", True, "", False),
        ("test_device_argument", "cpu", True, "", False),
        ("test_device_argument", "meta", False, _said("on device cpu", "cause_no_device_short"), False),
    ]
    cuda = [("test_device_argument", "cuda", False, _said("on device cpu", "cause_no_device_short"), True)]
    without = scoring.score(CFG, "scaled_dot_product", _outcomes(*base))["causal_mask"]
    with_cuda = scoring.score(CFG, "scaled_dot_product", _outcomes(*base, *cuda))["causal_mask"]
    assert without.score == with_cuda.score == 1.5
    assert any("on CUDA: reported, not scored" in line for line in with_cuda.lines)
    only_cuda = scoring.score(CFG, "scaled_dot_product", _outcomes(*base[:2], *cuda))["causal_mask"]
    assert only_cuda.score == 2.0 and "not scored" in only_cuda.lines[0]


def test_feedback_gives_a_summary_and_each_cause_once():
    rows = [
        ("test_values", "", False, _said("f(x) -> w: 3 of 9 values differ", "cause_not_softmax_last"), False),
        ("test_grads", "", False, _said("grad of f(x): 9 of 9 differ", "cause_not_softmax_last"), False),
        ("test_dtype", "cpu-float32", False, _said("f(x) -> w: 3 of 9 values differ", "cause_not_softmax_last"), False),
        ("test_dtype", "cpu-float16", False, _said("f(x) -> w: 3 of 9 values differ", "cause_not_softmax_last"), False),
        ("test_other", "", True, "", False),
    ]
    q = scoring.score(CFG, "scaled_dot_product", _outcomes(*rows))["causal_mask"]
    assert q.lines[0] == "Failed 3 of 4 checks: values, grads, dtype."
    assert q.lines[1] == "Likely cause: rows do not sum to 1 along the key axis: not a softmax over dim=-1?"
    assert sum("rows do not sum to 1" in line for line in q.lines) == 1
    # one line per kind of failure: the same symptom in two checks and three cases is one line
    assert (
        "FAIL test_values, test_dtype[cpu-float32, cpu-float16] (3 cases): f(x) -> w: 3 of 9 values differ" in q.lines
    )
    assert sum("3 of 9 values differ" in line for line in q.lines) == 1
    assert "FAIL test_grads: grad of f(x): 9 of 9 differ" in q.lines
    assert q.score == round(2 * 1 / 4, 2)


def test_fourteen_checks_failing_the_same_way_are_one_line_with_a_count():
    """The class, not the case: however many checks and cases fail with one symptom (a name
    the notebook never defined), the student reads it once, with how many, and every other
    symptom keeps a line of its own."""
    error = "raised NameError: name 'causal_mask' is not defined"
    rows = [(f"test_{k:02d}", case, False, error, False) for k in range(14) for case in ("a", "b", "")]
    rows.append(("test_other", "", False, "f(x) -> w: 3 of 9 values differ", False))
    for lang in ("en", "pt-BR"):
        with messages.language(lang):
            q = scoring.score(CFG, "scaled_dot_product", _outcomes(*rows))["causal_mask"]
            fail = [line for line in q.lines if is_failure_line(line)]
            assert len(fail) == 2, fail
            named = [line for line in fail if "NameError" in line]
            assert len(named) == 1 and messages.t("fail_cases", n=42) in named[0], named
            assert named[0].startswith(f"{messages.t('fail_prefix')} test_00[a, b], test_01[a, b], test_02[a, b], ")
            assert messages.t("fail_more_checks", n=11) in named[0] and named[0].endswith(error)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", sorted(CFG.assignments))
def test_an_error_every_check_raises_is_one_line_whatever_the_inputs(tmp_path, assignment):
    """The untouched template: the checks of a question call a stub that raises, each with its
    own inputs. Where every failure is that one error (the call's, `TestOutcome.kind`), the
    student reads it once, with how many cases, not once per check."""
    path = tmp_path / "template.ipynb"
    path.write_text(json.dumps(template(assignment)))
    result = grade(path, cfg=CFG)
    one = []
    for name, q in result.questions.items():
        failed = [o for o in result.outcomes if o.question == name and not o.passed and not o.evidence]
        if len(failed) < 2 or len({o.kind for o in failed}) != 1 or not failed[0].kind:
            continue
        one.append(name)
        fail = [line for line in q.lines if is_failure_line(line)]
        assert len(fail) == 1 and "NotImplementedError" in fail[0], (name, q.lines)
        assert messages.t("fail_cases", n=len(failed)) in fail[0], (name, fail, len(failed))
    assert len(one) >= min(2, len(result.questions)), {n: q.lines for n, q in result.questions.items()}


def test_weights_from_grading_yml(tmp_path, monkeypatch):
    own = tmp_path / "grading.yml"
    own.write_text("scoring:\n  weights:\n    causal_mask: {test_values: 3}\n")
    cfg = config.load(own)
    rows = [("test_values", "", True, "", False), ("test_device_argument", "meta", False, "x", False)]
    assert scoring.score(cfg, "scaled_dot_product", _outcomes(*rows))["causal_mask"].score == 1.5  # 2 * 3/4
    bad = tmp_path / "bad.yml"
    bad.write_text("scoring:\n  weights:\n    causal_mask: {test_values: -1}\n")
    with pytest.raises(config.ConfigError, match="must be a number from 0 to 1000000"):
        scoring.score(config.load(bad), "scaled_dot_product", _outcomes(*rows))


def test_same_score_with_and_without_cuda_cases(tmp_path, monkeypatch):
    """A mask built on the CPU whatever the device: the CUDA cases (collected here
    on a CPU machine, run on the meta device) add feedback, not points."""
    path = _notebook(tmp_path, "scaled_dot_product/causal_mask_ignores_device.py")
    plain = grade(path, cfg=CFG)
    monkeypatch.setenv("KIT_SIMULATE_DEVICES", "cuda")
    simulated = grade(path, cfg=CFG)
    cuda_cases = [o for o in simulated.outcomes if o.evidence]
    assert cuda_cases and not [o for o in plain.outcomes if o.evidence]
    assert any(not o.passed for o in cuda_cases)  # the bug shows on the simulated CUDA cases too
    assert plain.questions["causal_mask"].score == simulated.questions["causal_mask"].score < 2
    assert plain.score == simulated.score
    assert any("reported, not scored" in line for line in simulated.questions["causal_mask"].lines)


def test_a_masked_softmax_bug_costs_points_on_masked_softmax_alone(tmp_path):
    result = grade(_notebook(tmp_path, "classic_attention/softmax_nan_fully_masked.py"), cfg=CFG)
    lost = {n for n, q in result.questions.items() if q.score < q.max_score}
    assert lost == {"masked_softmax"}, {n: q.lines for n, q in result.questions.items()}
    for name in ("additive_attention", "dot_attention", "general_attention", "concat_attention"):
        assert any("was graded with a correct `masked_softmax`" in line for line in result.questions[name].lines)


def test_switched_off_the_callee_is_the_students_own(tmp_path):
    own = tmp_path / "grading.yml"
    own.write_text("scoring:\n  isolate_dependencies: false\n")
    result = grade(_notebook(tmp_path, "classic_attention/softmax_nan_fully_masked.py"), cfg=config.load(own))
    assert result.questions["dot_attention"].score < result.questions["dot_attention"].max_score


def _suite_files():
    return suite_files()


def test_suites_use_fail_never_assert():
    """A plain `assert` in a suite becomes 'internal grader error'; checks call fail()."""
    found = [
        f"{p.relative_to(layout.PRIVATE)}:{n.lineno}"
        for p in _suite_files()
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.Assert)
    ]
    assert not found, f"assert statements in the hidden suites: {found}"


def test_every_test_module_names_a_known_question():
    for assignment in CFG.assignments:
        files = sorted(layout.suite(assignment).glob("test_*.py"))
        assert files, assignment
        for p in files:
            tree = ast.parse(p.read_text())
            names = [
                n.value.value
                for n in tree.body
                if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "QUESTION" for t in n.targets)
            ]
            assert names and names[0] in CFG.questions(assignment), f"{p}: QUESTION {names}"


def test_a_module_without_a_known_question_is_reported_not_dropped(tmp_path, monkeypatch):
    suite = suite_skeleton(tmp_path, "scaled_dot_product", monkeypatch)
    (suite / "test_stray.py").write_text("def test_x():\n    pass\n")
    result = grade(ROOT / "examples/submissions/scaled_dot_product/reference.ipynb", cfg=CFG)
    assert any("QUESTION is None" in e for e in result.internal_errors)
    assert all("not graded" in q.lines[0] for q in result.questions.values())


def test_errors_name_the_function_and_the_cell_as_jupyter_shows_it(tmp_path):
    nb = json.loads((ROOT / "examples/submissions/classic_attention/reference.ipynb").read_text())
    count = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            count += 1
            cell["execution_count"] = count + 40
            if "def dot_attention(" in "".join(cell["source"]):
                cell["source"] = (
                    "def dot_attention(decoder_state, encoder_states, mask=None):\n    return decoder_state.foo\n"
                )
                prompt = f"[{count + 40}]:"
    path = tmp_path / "counted.ipynb"
    path.write_text(json.dumps(nb))
    lines = grade(path, cfg=CFG).questions["dot_attention"].lines
    # the prompt Jupyter and Colab show beside the cell, then the cell's first line (cut to fit)
    shown = f"{prompt} def dot_attention(decoder_state, encoder_states, mask=None):"
    assert len(shown) > LABEL_CHARS
    shown = shown[: LABEL_CHARS - 4].rstrip() + " ..."
    assert any(f"(in dot_attention, line 2 of the cell `{shown}`)" in line for line in lines), lines
    assert any(line.startswith("Likely cause (value error when sizes differ):") for line in lines), lines


def test_every_classic_question_names_every_family_check():
    """The classic functions share their checks (family.py); each question's file
    names every one of them, so that no copy drifts."""
    import inspect

    from autograder.private.assignments.classic_attention import family

    checks = {
        n
        for n, f in vars(family).items()
        if inspect.isfunction(f)
        and f.__module__ == family.__name__
        and not n.startswith("_")
        and {"sub", "cfg", "spec"} <= set(inspect.signature(f).parameters)
    }
    assert len(checks) >= 8
    members = 0
    for p in sorted(layout.suite("classic_attention").glob("test_*.py")):
        tree = ast.parse(p.read_text())
        # the family's members describe their function in a module-level SPEC (the one-step
        # classic functions); masked_softmax and the shapes drill's batched questions are not
        if not any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "SPEC" for t in n.targets) for n in tree.body
        ):
            continue
        members += 1
        called = {
            n.func.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and getattr(n.func.value, "id", None) == "family"
        }
        assert checks <= called, f"{p.name} leaves out {sorted(checks - called)}"
    assert members == 4  # additive, dot, general, concat

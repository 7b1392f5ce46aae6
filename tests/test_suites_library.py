"""The suites' library (`autograder/private/suites/`, docs/pages/suites.md): one job per module,
each saying it; the judge's settings reach a check and the library's functions only as the
`cfg` fixture passed on, never through a global; and every class question's case is a
`modules.Case`, whose reference is the reference module built with the case's arguments and
parameters (what the student's module gets), the same in the counterexample search."""

import ast
import importlib

import pytest
import torch

from autograder import layout
from autograder.judge import shrink
from autograder.private.suites import modules

SUITES = sorted(p for p in layout.SUITES.glob("*.py"))
ASSIGNMENT_CODE = sorted(p for p in layout.ASSIGNMENTS.glob("*/*.py"))
SKELETON_SUITE = layout.PACKAGE / "new" / "skeleton" / "suite" / "test___NAME__.py.tmpl"


def test_every_module_of_the_library_says_its_one_job():
    names = {p.stem for p in SUITES}
    assert "checks" not in names  # one way to reach a check: its module, no monolith beside it
    undocumented = [p.name for p in SUITES if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not undocumented, undocumented


def _cfg_reads_without_a_parameter(source):
    """The lines where `cfg` is read and no enclosing function takes it (as a parameter or
    binds it itself), nor the module."""
    bad = []

    def bound(fn):
        names = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
        return names

    def walk(node, scopes):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            scopes = scopes + [bound(node)]
        for child in ast.iter_child_nodes(node):
            walk(child, scopes)
        if isinstance(node, ast.Name) and node.id == "cfg" and isinstance(node.ctx, ast.Load):
            if not any("cfg" in s for s in scopes):
                bad.append(node.lineno)

    walk(ast.parse(source), [])
    return bad


@pytest.mark.parametrize(
    "path", SUITES + ASSIGNMENT_CODE + [SKELETON_SUITE], ids=lambda p: p.relative_to(layout.KIT_ROOT).as_posix()
)
def test_the_cfg_reaches_a_check_only_as_an_argument(path):
    """The settings a check judges with are the `cfg` fixture, handed down: no module of the
    library or of a suite reads a cfg it was not given (a global, a plugin's attribute, a
    grading.yml), and no module keeps one."""
    source = path.read_text()
    assert not _cfg_reads_without_a_parameter(source)
    tree = ast.parse(source)
    assert not [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Global)]
    kept = [
        t.id
        for n in tree.body
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name) and "cfg" in t.id.lower()
    ]
    assert not kept, kept  # a module that keeps a cfg (`_CFG = []`, set by a hook) is a second way
    kit_cfg = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "kit_cfg"]
    # the plugin's attribute: read once, by the parametrisation (collection runs before any fixture)
    assert not kit_cfg or path.name == "conftest.py", kit_cfg


def test_the_scan_finds_a_cfg_read_from_a_global():
    planted = "def matches(got, want):\n    return cfg.tolerance(got.dtype)\n"
    assert _cfg_reads_without_a_parameter(planted) == [2]
    assert _cfg_reads_without_a_parameter(planted.replace("(got, want)", "(got, want, cfg)")) == []


def _cases():
    """One small case of every class question (`modules.Case`), from the assignments' suites."""
    mha = importlib.import_module("autograder.private.assignments.multi_head.test_multi_head_attention")
    enc = importlib.import_module("autograder.private.assignments.seq2seq_attention.test_encoder")
    dec = importlib.import_module("autograder.private.assignments.seq2seq_attention.test_attention_decoder")
    ffn = importlib.import_module("autograder.private.assignments.transformer_block.test_feed_forward")
    return [
        mha.Case(2, 3, 4, 6, 2, 7, mask="padding"),
        enc.Case(2, 4, 9, 3, 5, 7),
        dec.Case(2, 4, 9, 3, 5, 4, 7),
        ffn.Case(2, 3, 4, 6, 7),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: type(c).__module__.rsplit(".", 1)[-1])
def test_every_class_question_is_a_module_case_run_beside_the_reference(case):
    """The reference a case checks against is its class from the solutions, built with the
    case's arguments, the case's parameters loaded (rounded to the dtype the student's module
    is moved to), on the case's inputs; the counterexample search's cases are built the same way."""
    assert isinstance(case, modules.Case)
    built = getattr(case.SOLUTIONS, case.NAME)(*case.ctor(), **case.ctor_kwargs()).double()
    built.load_state_dict({k: v.to(torch.float32).double() for k, v in case.state.items()})
    rounded = [a.to(torch.float32).double() if a.is_floating_point() else a for a in case.args]
    with torch.no_grad():
        out = built(*rounded, **{k: v for k, v in case.kwargs.items()})
    out = out if isinstance(out, tuple) else (out,)
    expected = case.expected(torch.float32)
    assert list(expected) == list(case.OUT)
    for got, want in zip(expected.values(), out):
        assert torch.equal(got, want)
    assert case.construct()["args"] == list(case.ctor())
    sizes, make, sent = case.fresh()
    assert sizes == case.named_sizes() and len(sent) == len(case.args) + len(case.kwargs) + len(case.state)
    again = make(sizes, 11)
    assert isinstance(again, shrink.ModuleCase) and again.label == case.module
    with torch.no_grad():
        ref_out = again.reference(again.state, again.args, again.kwargs)
    assert [tuple(o.shape) for o in ref_out] == [tuple(o.shape) for o in expected.values()]


def test_why_no_gradients_came_is_a_key_the_worker_sends_never_its_words():
    """The worker says why it computed no gradients as a catalog key and integer fields
    (`calls.WORKER_GRAD_ERRORS`), said in the language in force; torch's own error line is
    kept as it is; a key or fields it may not send read as unreadable, never as a pass."""
    from autograder import messages
    from autograder.messages import t
    from autograder.private.suites import calls

    for lang in messages.LANGUAGES:
        with messages.language(lang):
            sent = {"error_key": "grads_output_count", "fields": {"n": 2, "got": 1}}
            assert calls.grads_error(sent) == t("grads_output_count", n=2, got=1)
            assert calls.grads_error({"error_key": "grads_not_connected", "fields": {}}) == t("grads_not_connected")
            unreadable = t("grads_unreadable")
            for bad in (
                {"error_key": "stand_in_flood", "fields": {}},
                {"error_key": "grads_output_count", "fields": {"n": "2", "got": 1}},
                {"error_key": "grads_output_count", "fields": {"n": 2}},
                {"error_key": ["grads_not_connected"], "fields": {}},
                {"error": 3},
            ):
                assert calls.grads_error(bad) == unreadable, bad
    torch_line = "RuntimeError: expected scalar type Double but found Float"
    assert calls.grads_error({"error": torch_line}) == torch_line
    assert calls.grads_hint({"error": torch_line}) is not None
    assert calls.grads_error({"inputs": [], "params": {}}) is None

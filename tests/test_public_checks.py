"""The public checks (what `grader.check` runs): they flag most catalog bugs before
submission, pass every correct implementation, fail on the untouched stub, and keep
every message in one place per check."""

import ast
import io
import re

import pytest

from autograder import config
from autograder.audit import run as audit_run
from autograder.audit.catalog import Entry
from autograder.build import sync
from conftest import ASSIGNMENTS, ROOT, template

CFG = config.load(ROOT / "grading.yml")


def public_test_names(nb):
    """{question: [test function names]} from a student notebook's metadata."""
    return {q: re.findall(r"^def (test_\w+)", src, re.M) for q, src in nb["metadata"]["otter"]["tests"].items()}


@pytest.mark.slow
def test_catalog_bugs_flagged_and_correct_entries_pass(catalog_public):
    def of(kind):
        return {k: v for k, (kd, v) in catalog_public.items() if kd == kind}

    buggy, correct, refs = of("buggy"), of("correct"), of("reference")
    assert len(refs) == len(ASSIGNMENTS) and not any(refs.values()), refs
    assert correct and not any(correct.values()), {k: v for k, v in correct.items() if v}
    flagged = [k for k, v in buggy.items() if v]
    assert len(buggy) >= 80 and len(flagged) >= 0.6 * len(buggy), (
        f"{len(flagged)}/{len(buggy)} flagged; not flagged: {sorted(k[1] for k in buggy if k not in flagged)}"
    )
    # The headline cases of the issue: an unscaled SDPA and an MHA that adds an axis to the mask.
    not_scaled = buggy[("scaled_dot_product", "sdpa_not_scaled")]
    assert any("second_worked_example" in f for f in not_scaled), not_scaled
    unsqueezed = buggy[("multi_head", "mha_mask_unsqueezed")]
    assert any("matches_torch" in f for f in unsqueezed), unsqueezed


@pytest.mark.slow
def test_the_untouched_stub_fails_every_public_check(catalog_public):
    # every check of what the code computes; not the build's `*_as_graded` cases, about how the
    # notebook is written (a stub is written as the grader runs it: tests/test_parity.py)
    for a in ASSIGNMENTS:
        every = {
            f"{q}/{t}" for q, ts in public_test_names(template(a)).items() for t in ts if not t.endswith("_as_graded")
        }
        assert len(every) >= 2 * len(CFG.questions(a))
        assert set(catalog_public[(a, "(template)")][1]) == every


def _test_cells(assignment):
    nb = sync.read_notebook(sync.master_path(assignment))
    inside = False
    for cell in nb.cells:
        if cell.cell_type == "raw":
            inside = {"# BEGIN TESTS": True, "# END TESTS": False}.get(cell.source.strip(), inside)
        elif inside and cell.cell_type == "code":
            yield cell.source


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_message_of_a_public_check_lives_in_its_messages_dict(assignment):
    """One MESSAGES dict per check holds every string a student reads (a later issue translates them)."""
    for source in _test_cells(assignment):
        fn = ast.parse(source).body[0]
        messages = [n for n in fn.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "MESSAGES"]
        assert len(messages) == 1 and isinstance(messages[0].value, ast.Dict), f"{fn.name}: one MESSAGES dict"
        keys = {k.value for k in messages[0].value.keys}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assert):
                shown = node.msg
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "AssertionError":
                shown = node.args[0] if node.args else None
            else:
                continue
            assert shown is not None, f"{fn.name}, line {node.lineno}: a check without a message"
            base = (
                shown.func.value
                if isinstance(shown, ast.Call) and isinstance(shown.func, ast.Attribute) and shown.func.attr == "format"
                else shown
            )
            assert (
                isinstance(base, ast.Subscript)
                and getattr(base.value, "id", "") == "MESSAGES"
                and getattr(base.slice, "value", next(iter(keys))) in keys
            ), f"{fn.name}, line {node.lineno}: the message is not MESSAGES[...]"


def test_audit_report_has_the_public_column_and_fails_on_a_correct_entry_that_fails_one():
    def entry(name, correct):
        return Entry(
            "scaled_dot_product",
            name,
            ROOT,
            "",
            correct,
            ["causal_mask"],
            [] if correct else ["causal_mask"],
            False,
            {},
        )

    full = {q: (p, p) for q, p in CFG.questions("scaled_dot_product").items()}
    lost = dict(full, causal_mask=(0.0, full["causal_mask"][1]))
    rows = [
        (entry("bug_a", False), lost, {}, "caught", ["causal_mask/test_causal_mask_small"]),
        (entry("bug_b", False), lost, {}, "caught", []),
        (entry("good", True), full, {}, "ok", []),
    ]
    out = io.StringIO()
    assert audit_run.report(rows, CFG, out=out) == 0
    text = out.getvalue()
    assert "buggy entries flagged by a public check: 1/2 (50%)" in text
    assert "correct entries passing every public check: 1/1" in text
    assert re.search(r"bug_a .*caught  causal_mask/test_causal_mask_small", text) and re.search(
        r"bug_b .*caught  \.", text
    )
    rows[2] = (entry("good", True), full, {}, "ok", ["padding_mask/test_padding_mask_small"])
    out = io.StringIO()
    assert audit_run.report(rows, CFG, out=out) == 1
    assert "correct entries passing every public check: 0/1" in out.getvalue()


def test_the_audit_names_a_public_failure_no_hidden_check_charges():
    """Parity of the hidden suites with the public checks, on the audit's own rows: a buggy
    entry that a public check flags on a question it may be charged on, where it keeps every
    point, is named with that question and fails the report; a public failure on a question
    the entry may not be charged on (its DecoderBlock run inside the public TransformerLM
    check: the judge stands in for it there) and one whose question the hidden suite charges
    are not."""

    def entry(name, functions):
        return Entry("transformer_block", name, ROOT, "", False, functions, [], False, {})

    full = {q: (p, p) for q, p in CFG.questions("transformer_block").items()}
    charged = dict(full, decoder_block=(1.0, full["decoder_block"][1]))
    rows = [
        (entry("kept", ["DecoderBlock"]), full, {}, "caught", ["decoder_block/test_decoder_block_parameters"]),
        (entry("elsewhere", ["DecoderBlock"]), charged, {}, "caught", ["transformer_lm/test_transformer_lm_causal"]),
        (entry("charged", ["DecoderBlock"]), charged, {}, "caught", ["decoder_block/test_decoder_block_parameters"]),
    ]
    weaker = audit_run.weaker_than_public(rows, CFG)
    assert [(e.name, q, check) for e, q, check in weaker] == [
        ("kept", "decoder_block", "decoder_block/test_decoder_block_parameters")
    ]
    out = io.StringIO()
    assert audit_run.report(rows, CFG, out=out) == 1
    text = out.getvalue()
    assert "HIDDEN SUITE WEAKER THAN PUBLIC: transformer_block/kept keeps every point of decoder_block" in text
    assert "public failures no hidden check charges (entry, question): 1" in text
    assert audit_run.report(rows[1:], CFG, out=io.StringIO()) == 0
